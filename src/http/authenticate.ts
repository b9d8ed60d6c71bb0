/**
 * 401 and 403, in that order, for the operation express-openapi-validator matched. These run
 * between the validator's route matching and its request validation (see src/http/validator.ts),
 * so an unauthenticated or under-scoped caller learns nothing from body validation.
 */
import type { NextFunction, Request, Response } from 'express';
import { authenticateToken } from '../keys/keys.service.js';
import type { KeyCache } from '../keys/key-cache.js';
import type { KeyUse, Use } from '../keys/key-use.js';
import { bearerToken, hasBearer } from './kit/bearer.js';
import { ProblemError } from '../kernel/problem.js';
import { ANONYMOUS, type Actor } from '../kernel/actor.js';
import type { ScopeId } from '../kernel/scopes.js';
import type { FailedAuth } from './kit/budget-hooks.js';
import { SESSION_COOKIE, userForSession } from '../sessions/sessions.service.js';
import { csrfTokenMatches } from '../sessions/csrf.js';
import { parseCookies } from '../kernel/cookies.js';

/** A session-only operation called without a signed-in session (the validator's own check says so too). */
export const sessionRequired = () =>
  new ProblemError(
    401,
    'session-required',
    'Sign-in required',
    'This operation is for signed-in people in the web application (the shipyard_session cookie); API keys are refused.',
    {},
    { 'WWW-Authenticate': 'Bearer' },
  );

/** A session-only operation called with an API key: refused whatever the key's scopes or its owner's roles. */
export const sessionOnly = (operationId: string, grantedScopes?: readonly ScopeId[]) =>
  new ProblemError(
    403,
    'session-only',
    'Not available to API keys',
    `${operationId} is for signed-in people in the web application only. API keys carry no account roles, so every key is refused, an administrator's included.`,
    grantedScopes ? { grantedScopes: [...grantedScopes] } : {},
    { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' },
  );

/**
 * The web application's session, for the session-only (moderation) operations: the
 * `shipyard_session` cookie, and the `X-CSRF-Token` header carrying that session's CSRF token
 * (src/sessions/csrf.ts; the signed-in pages carry it). A page on another site can make the
 * browser send the cookie, never this header.
 */
async function sessionActor(req: Request): Promise<Actor> {
  const secret = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  const user = await userForSession(req.em, secret);
  if (!user) {
    throw sessionRequired();
  }
  if (!csrfTokenMatches(req.headers['x-csrf-token'], secret)) {
    throw new ProblemError(
      403,
      'csrf-token-required',
      'CSRF token required',
      "A signed-in request must send the X-CSRF-Token header with this session's CSRF token (the csrf-token meta tag of the signed-in pages).",
    );
  }
  return { userId: user.id, via: 'session', scopes: [] };
}

/** A key's use through the REST API, as the keys page and the security log show it. */
export const restUse = (req: Request, actor: Actor): Use => ({
  keyId: actor.keyId!,
  userId: actor.userId,
  channel: 'rest',
  address: req.ip,
  client: req.get('user-agent'),
});

/**
 * The caller of a matched operation: nobody (public), the web session (session-only), or the
 * API key. A refused authentication is counted against the address's failed-authentication
 * budget, which may turn it into a 429 (src/http/rate-limit.ts); a valid key never meets it.
 */
export const authenticate = (keys: KeyCache, failedAuth: FailedAuth, keysPage: string, uses: KeyUse) =>
  async function authenticate(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const op = req.openapi?.schema;
      if (!op) throw new Error('authenticate ran before the operation was matched');
      if (op['x-public'] === true) {
        req.actor = ANONYMOUS;
        return next();
      }
      req.actor =
        op['x-session-only'] === true && !hasBearer(req)
          ? await sessionActor(req)
          : await authenticateToken(req.em, bearerToken(req), keys, keysPage);
      if (req.actor.keyId) uses.note(restUse(req, req.actor));
      // Like GitHub's token-expiration header: every response tells the key's expiry (unless the
      // request deadline has answered meanwhile: src/http/timeout.ts).
      if (req.actor.expiresAt && !res.headersSent)
        res.setHeader('Shipyard-Key-Expiration', req.actor.expiresAt.toISOString());
      next();
    } catch (err) {
      // A refused credential (a bad key, or one sent twice) counts against its address's budget.
      const refused = err instanceof ProblemError && (err.status === 401 || err.slug === 'malformed-request');
      next(refused ? await failedAuth(req, err).catch(() => err) : err);
    }
  };

export function requireScope(req: Request, _res: Response, next: NextFunction): void {
  const op = req.openapi?.schema;
  const actor = req.actor;
  if (!op || !actor) return next(new Error('requireScope ran before authenticate'));
  if (op['x-public'] === true) return next();
  if (op['x-session-only'] === true) {
    if (actor.via === 'key') {
      return next(sessionOnly(String(op.operationId), actor.scopes));
    }
    return next();
  }
  const scope = op['x-required-scope'];
  if (typeof scope !== 'string') return next(new Error(`operation ${op.operationId} has no scope tag`));
  if (actor.via === 'key' && !(actor.scopes as readonly string[]).includes(scope)) {
    return next(
      new ProblemError(
        403,
        'insufficient-scope',
        'Insufficient scope',
        `${op.operationId} needs the '${scope}' scope; this key has ${actor.scopes.length ? actor.scopes.join(', ') : 'no scopes'}.`,
        { requiredScope: scope as never, grantedScopes: [...actor.scopes] },
        { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      ),
    );
  }
  next();
}
