/**
 * OAuth 2.1 sign-in for MCP clients (docs/decisions/0011-oauth-sign-in.md): what a client may
 * register, what it may ask for, what the person approved, and the exchange of a one-time,
 * PKCE-bound code for an ordinary API key. The protocol messages are parsed by the MCP SDK's
 * handlers (src/oauth/oauth.routes.ts); this file holds the rules, and throws OAuthRefusal with
 * the RFC 6749 error code a refusal maps to.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { lineProblem } from '../kernel/text.js';
import { isUuid } from '../kernel/ids.js';
import { isScopeId, SCOPE_IDS, type ScopeId } from '../kernel/scopes.js';
import { MCP_SCOPES } from '../kernel/contract.js';
import { ProblemError } from '../kernel/problem.js';
import { createKey, revokeKey } from '../keys/keys.service.js';
import { hashToken } from '../keys/tokens.js';
import { ApiKey } from '../keys/api-key.entity.js';
import { User } from '../users/user.entity.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthGrant } from './oauth-grant.entity.js';

/** How long the person has to approve or deny a request. */
export const GRANT_MINUTES = 10;
/** How long an approved code may wait for its exchange. */
const CODE_MINUTES = 5;
/** How long grants are kept: a code used twice within it still finds the key it gave, to revoke it. */
const GRANT_KEEP_HOURS = 24;
/** A registration nobody approved within a day, or used for 90 days, is removed. */
const UNUSED_CLIENT_HOURS = 24;
const IDLE_CLIENT_DAYS = 90;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_client_metadata'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied';

/** A refusal in OAuth's terms (RFC 6749 §4.1.2.1 and §5.2): the error code and a sentence. */
export class OAuthRefusal extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A client as the protocol handlers see it: public (PKCE, no secret), with its redirect URIs. */
export type ClientInfo = {
  client_id: string;
  client_id_issued_at?: number;
  client_name: string;
  client_uri?: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
};

const info = (c: OAuthClient): ClientInfo => ({
  client_id: c.id,
  client_id_issued_at: Math.floor(c.createdAt.getTime() / 1000),
  client_name: c.name,
  ...(c.clientUri ? { client_uri: c.clientUri } : {}),
  redirect_uris: c.redirectUris,
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
});

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** Schemes that are the browser's or the system's own, never an app's: a code must not go there. */
const NOT_AN_APP = new Set(
  'javascript data file vbscript about blob ftp ws wss view-source chrome chrome-extension edge filesystem jar mailto tel sms urn itms-services ms-settings intent resource moz-extension'.split(
    ' ',
  ),
);

/**
 * App schemes that are not reverse domain names but belong to editors whose MCP clients sign in
 * with them (Cursor: `cursor://anysphere.cursor-retrieval/…`). Any other private-use scheme must
 * be a reverse domain name (RFC 8252 §7.1): `ssh:`, `x-javascript:` or `git:` belong to no app.
 */
const KNOWN_APP_SCHEMES = new Set(['cursor', 'vscode', 'vscode-insiders', 'windsurf']);

/**
 * Why a redirect URI cannot be registered, if it cannot (RFC 8252, RFC 9700 §2.1): https; http
 * only to this machine (a native client's loopback listener, any port); or an app's own scheme in
 * the form `scheme://…`, named after a domain (`com.example.app://…`) or one of KNOWN_APP_SCHEMES;
 * never a fragment, and never a scheme a browser or the system handles itself.
 */
export function redirectProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  if (!storable(uri) || !URL.canParse(uri)) return 'is not a URL';
  const url = new URL(uri);
  const scheme = url.protocol.slice(0, -1);
  if (!uri.toLowerCase().startsWith(`${scheme}://`)) return `is not written ${scheme}://…`;
  if (url.hash) return 'has a fragment';
  if (url.username || url.password) return 'carries credentials';
  if (scheme === 'http' && !LOOPBACK.has(url.hostname))
    return 'is http to another machine (http is for loopback addresses; use https)';
  if (scheme !== 'http' && scheme !== 'https' && (NOT_AN_APP.has(scheme) || !/^[a-z][a-z0-9+.-]*$/.test(scheme)))
    return `uses ${scheme}:, which is not an app's own scheme`;
  if (scheme !== 'http' && scheme !== 'https' && !scheme.includes('.') && !KNOWN_APP_SCHEMES.has(scheme))
    return `uses ${scheme}:, which is not an app's own scheme: name it after a domain you control, reversed (com.example.app://…, RFC 8252 §7.1)`;
  return undefined;
}

/** Dynamic Client Registration (RFC 7591): every client is registered public, whatever it asked. */
export async function registerClient(em: EntityManager, metadata: Record<string, unknown>): Promise<ClientInfo> {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
    throw new OAuthRefusal('invalid_client_metadata', `redirect_uris: give 1 to ${MAX_REDIRECT_URIS} URIs.`);
  for (const uri of uris) {
    const problem = typeof uri === 'string' ? redirectProblem(uri) : 'is not a string';
    if (problem)
      throw new OAuthRefusal('invalid_client_metadata', `redirect_uris: ${String(uri).slice(0, 100)} ${problem}.`);
  }
  const grants = metadata.grant_types;
  if (Array.isArray(grants) && !grants.includes('authorization_code'))
    throw new OAuthRefusal(
      'invalid_client_metadata',
      'grant_types: this server issues keys by authorization_code only.',
    );
  const responses = metadata.response_types;
  if (Array.isArray(responses) && !responses.includes('code'))
    throw new OAuthRefusal('invalid_client_metadata', 'response_types: this server answers with a code only.');
  const host = new URL(uris[0] as string).host;
  const name =
    typeof metadata.client_name === 'string' ? metadata.client_name.trim() : `A client at ${host || uris[0]}`;
  const nameProblem = lineProblem(name);
  if (nameProblem || name.length > 100)
    throw new OAuthRefusal('invalid_client_metadata', `client_name: needs ${nameProblem ?? '1 to 100 characters'}.`);
  const clientUri = typeof metadata.client_uri === 'string' ? metadata.client_uri : undefined;
  if (
    clientUri !== undefined &&
    (clientUri.length > MAX_URI_LENGTH || !/^https:\/\//.test(clientUri) || !URL.canParse(clientUri))
  )
    throw new OAuthRefusal('invalid_client_metadata', 'client_uri: an https URL, if given.');
  const client = em.create(OAuthClient, {
    id: randomUUID(),
    name,
    redirectUris: uris as string[],
    clientUri: clientUri ?? null,
  });
  await em.flush();
  return info(client);
}

/** A registered client by its id, or undefined. */
export async function findClient(em: EntityManager, id: string): Promise<ClientInfo | undefined> {
  if (!isUuid(id)) return undefined;
  const client = await em.findOne(OAuthClient, { id });
  return client ? info(client) : undefined;
}

/** What the scopes a client asked for mean: the ones it may be offered, and those ticked at first. */
export function offeredScopes(requested: readonly string[]): { offered: ScopeId[]; ticked: ScopeId[] } {
  if (requested.length === 0) return { offered: [...SCOPE_IDS], ticked: [...MCP_SCOPES] };
  const asked = requested as ScopeId[];
  return { offered: SCOPE_IDS.filter((s) => asked.includes(s)), ticked: SCOPE_IDS.filter((s) => asked.includes(s)) };
}

export type AuthorizationRequest = {
  client: ClientInfo;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  state?: string;
  resource?: URL;
  /** The browser-binding cookie's value of the browser that sent the request (BROWSER_COOKIE). */
  browser: string;
};

/**
 * The cookie that binds an authorization request to the browser that started it (RFC 9700 §4.7):
 * set at /authorize, checked when the consent screen is shown and answered, so that a link to
 * someone else's pending request cannot be approved by another account's session.
 */
const BROWSER_COOKIE = 'shipyard_oauth_browser';
/**
 * Its name: on https `__Host-` prefixed, so that only this origin can set it (a sibling subdomain
 * cannot plant a value it also used for a request of its own); the same without the prefix on a
 * local http origin, where a browser keeps no Secure cookie.
 */
export const browserCookie = (secure: boolean) => (secure ? `__Host-${BROWSER_COOKIE}` : BROWSER_COOKIE);
const BROWSER_VALUE = /^[A-Za-z0-9_-]{43}$/;
/** This browser's binding value: the one its cookie holds, or a new one to set. */
export const browserBinding = (cookie: string | undefined): { value: string } =>
  cookie && BROWSER_VALUE.test(cookie) ? { value: cookie } : { value: randomBytes(32).toString('base64url') };
/** Whether the browser that sent `cookie` is the one that started the request. */
export const sameBrowser = (grant: OAuthGrant, cookie: string | undefined): boolean =>
  !!cookie && BROWSER_VALUE.test(cookie) && grant.browserHash !== null && hashToken(cookie) === grant.browserHash;

/** Text PostgreSQL can store and a browser can carry: no NUL, no lone surrogate. */
const storable = (v: string) => !v.includes('\u0000') && v.isWellFormed();

/**
 * What is wrong with an authorization request's own parameters, checked before anything else
 * (docs/decisions/0011): a request this server would refuse is answered here, with a 400, and
 * never redirected to the client. Every registered URI may be anyone's (registration is open), so a
 * refusal sent there would make /authorize an open redirect; only the person's own answer on the
 * consent screen goes back to the client.
 */
export function authorizationProblem(
  params: Record<string, unknown>,
  resources: readonly string[],
): OAuthRefusal | undefined {
  for (const [name, value] of Object.entries(params))
    if (typeof value !== 'string' || !storable(value))
      return new OAuthRefusal(
        'invalid_request',
        `${name.slice(0, 40)}: one text value without NUL or lone surrogates.`,
      );
  const p = params as Record<string, string | undefined>;
  if (p.response_type !== 'code') return new OAuthRefusal('invalid_request', 'response_type: code is the only one.');
  if (p.code_challenge_method !== 'S256')
    return new OAuthRefusal('invalid_request', 'code_challenge_method: S256 is the only one (PKCE is required).');
  if (!/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge ?? ''))
    return new OAuthRefusal('invalid_request', 'code_challenge: the base64url SHA-256 of the verifier, 43 characters.');
  if (p.state !== undefined && p.state.length > 1000)
    return new OAuthRefusal('invalid_request', 'state: at most 1000 characters.');
  const unknown = (p.scope ?? '').split(' ').filter((s) => s !== '' && !isScopeId(s));
  if (unknown.length)
    return new OAuthRefusal(
      'invalid_scope',
      `Unknown scope ${unknown.map((s) => `'${s.slice(0, 50)}'`).join(', ')}; the scopes are ${SCOPE_IDS.join(' ')}.`,
    );
  try {
    ourResource(p.resource, resources);
  } catch (err) {
    return err as OAuthRefusal;
  }
  return undefined;
}

/**
 * Records a client's authorization request (checked by authorizationProblem) for the person to
 * approve or deny, and returns its id.
 */
export async function beginGrant(
  em: EntityManager,
  request: AuthorizationRequest,
  resources: readonly string[],
): Promise<string> {
  const grant = em.create(OAuthGrant, {
    clientId: request.client.client_id,
    clientName: request.client.client_name,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: ourResource(request.resource?.href, resources),
    state: request.state ?? null,
    requestedScopes: [...new Set(request.scopes.filter(isScopeId))],
    browserHash: hashToken(request.browser),
    expiresAt: new Date(Date.now() + GRANT_MINUTES * 60_000),
  });
  await em.flush();
  return grant.id;
}

function ourResource(asked: string | undefined, resources: readonly string[]): string {
  if (asked === undefined) return resources[0]!;
  const normal = asked.replace(/\/$/, '');
  const match = resources.find((r) => r.replace(/\/$/, '') === normal);
  if (!match)
    throw new OAuthRefusal(
      'invalid_target',
      `resource: this server issues keys for ${resources.join(' or ')}, not for ${asked.slice(0, 200)}.`,
    );
  return match;
}

/** A request still waiting for the person's answer, or undefined (unknown, answered or expired). */
export async function pendingGrant(em: EntityManager, id: string): Promise<OAuthGrant | undefined> {
  if (!isUuid(id)) return undefined;
  const grant = await em.findOne(OAuthGrant, { id, user: null, expiresAt: { $gt: new Date() } });
  return grant ?? undefined;
}

/** Where the person's answer sends the browser: the client's redirect URI with the code or the error. */
function answerUrl(grant: OAuthGrant, issuer: string, params: Record<string, string>): string {
  const url = new URL(grant.redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (grant.state != null) url.searchParams.set('state', grant.state);
  // RFC 9207: the client checks that the answer came from the server it asked.
  url.searchParams.set('iss', issuer);
  return url.href;
}

/**
 * The person approves: the scopes they ticked (among those offered) and the expiry they chose.
 * Returns where to send the browser, with a one-time code bound to the request.
 */
export async function approveGrant(
  em: EntityManager,
  grant: OAuthGrant,
  answer: { userId: string; scopes: string[]; keyExpiresAt: Date; issuer: string },
): Promise<string> {
  const { offered } = offeredScopes(grant.requestedScopes);
  const scopes = [...new Set(answer.scopes)];
  if (scopes.length === 0)
    throw new ProblemError(400, 'validation', 'No scope ticked', 'Tick at least one scope, or deny the request.');
  const stray = scopes.filter((s) => !(offered as string[]).includes(s));
  if (stray.length)
    throw new ProblemError(400, 'validation', 'Scope not asked for', `The client did not ask for ${stray.join(', ')}.`);
  const code = randomBytes(32).toString('base64url');
  grant.user = em.getReference(User, answer.userId);
  grant.grantedScopes = scopes;
  grant.keyExpiresAt = answer.keyExpiresAt;
  grant.codeHash = hashToken(code);
  grant.codeExpiresAt = new Date(Date.now() + CODE_MINUTES * 60_000);
  if (isUuid(grant.clientId)) await em.nativeUpdate(OAuthClient, { id: grant.clientId }, { lastUsedAt: new Date() });
  await em.flush();
  return answerUrl(grant, answer.issuer, { code });
}

/** The person denies: the request is gone, and the client hears `access_denied`. */
export async function denyGrant(em: EntityManager, grant: OAuthGrant, issuer: string): Promise<string> {
  const url = answerUrl(grant, issuer, { error: 'access_denied', error_description: 'The person denied the request.' });
  em.remove(grant);
  await em.flush();
  return url;
}

async function grantForCode(em: EntityManager, clientId: string, code: string): Promise<OAuthGrant> {
  const grant = code.length <= 200 ? await em.findOne(OAuthGrant, { codeHash: hashToken(code) }) : null;
  if (!grant || grant.clientId !== clientId)
    throw new OAuthRefusal('invalid_grant', 'This code is not known to this client.');
  return grant;
}

/** The PKCE challenge the code was bound to (the handler checks the verifier against it). */
export async function codeChallenge(em: EntityManager, clientId: string, code: string): Promise<string> {
  return (await grantForCode(em, clientId, code)).codeChallenge;
}

export type IssuedKey = { token: string; expiresAt: Date; scopes: string[] };

/** PKCE S256 (RFC 7636 §4.6): the verifier's SHA-256, base64url, is the challenge. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

type Exchanged = { issued: IssuedKey } | { refusal: OAuthRefusal } | { replayedKey: string | null };

/**
 * The exchange (RFC 6749 §4.1.3): once, within minutes, by the client it was issued to, with the
 * PKCE verifier, for the same redirect URI and resource. The code's row is locked for the whole
 * exchange, so that a second presentation waits for the first and finds what it gave. Any
 * presentation uses the code up; the key is made then, for the person who approved, with what
 * they ticked and chose. A code presented again revokes the key the first presentation gave.
 */
export async function exchangeCode(
  em: EntityManager,
  request: { clientId: string; code: string; verifier: string; redirectUri?: string; resource?: URL; maxDays?: number },
): Promise<IssuedKey> {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(request.verifier))
    throw new OAuthRefusal('invalid_request', 'code_verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636).');
  if (request.code.length > 200) throw new OAuthRefusal('invalid_grant', 'This code is not known to this client.');
  const outcome = await em.transactional(async (tem): Promise<Exchanged> => {
    const grant = await tem.findOne(
      OAuthGrant,
      { codeHash: hashToken(request.code) },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const refuse = (code: OAuthErrorCode, why: string) => ({ refusal: new OAuthRefusal(code, why) });
    if (!grant || grant.clientId !== request.clientId)
      return refuse('invalid_grant', 'This code is not known to this client.');
    if (grant.usedAt) return { replayedKey: grant.keyId ?? null };
    grant.usedAt = new Date();
    if (!pkceMatches(request.verifier, grant.codeChallenge))
      return refuse(
        'invalid_grant',
        'code_verifier does not match the challenge; this code is used up. Sign in again.',
      );
    if (!grant.codeExpiresAt || grant.codeExpiresAt.getTime() < Date.now())
      return refuse('invalid_grant', `This code expired (codes last ${CODE_MINUTES} minutes). Sign in again.`);
    if (request.redirectUri !== undefined && request.redirectUri !== grant.redirectUri)
      return refuse('invalid_grant', 'redirect_uri: not the one this code was issued for.');
    if (
      request.resource !== undefined &&
      request.resource.href.replace(/\/$/, '') !== grant.resource.replace(/\/$/, '')
    )
      return refuse('invalid_target', `resource: this code was issued for ${grant.resource}.`);
    try {
      const { key, token } = await createKey(tem, {
        userId: grant.user!.id,
        name: grant.clientName,
        scopes: grant.grantedScopes!,
        expiresAt: grant.keyExpiresAt!,
        oauthClientId: grant.clientId,
        maxDays: request.maxDays,
        origin: { channel: 'oauth', client: grant.clientName },
      });
      grant.keyId = key.id;
      if (isUuid(grant.clientId))
        await tem.nativeUpdate(OAuthClient, { id: grant.clientId }, { lastUsedAt: new Date() });
      return { issued: { token, expiresAt: key.expiresAt, scopes: key.scopes } };
    } catch (err) {
      if (err instanceof ProblemError && err.status < 500) return refuse('invalid_grant', err.detail);
      throw err;
    }
  });
  if ('issued' in outcome) return outcome.issued;
  if ('refusal' in outcome) throw outcome.refusal;
  // The key may be gone already (its account deleted): then there is nothing left to revoke.
  if (outcome.replayedKey)
    await revokeKey(em, outcome.replayedKey, undefined, { channel: 'oauth' }).catch((err: unknown) => {
      if (!(err instanceof ProblemError && err.status === 404)) throw err;
    });
  throw new OAuthRefusal('invalid_grant', 'This code was used already: the key it gave is revoked. Sign in again.');
}

/** Revocation (RFC 7009): a key this client was given is revoked; anything else is ignored. */
export async function revokeClientKey(em: EntityManager, clientId: string, token: string): Promise<void> {
  if (token.length > 200) return;
  const key = await em.findOne(ApiKey, { tokenHash: hashToken(token), oauthClientId: clientId });
  if (key) await revokeKey(em, key.id, undefined, { channel: 'oauth', client: key.name });
}

/**
 * Housekeeping: grants past their day; registrations nobody approved within a day; and those
 * nobody signed in through for 90 days, unless a key they were given still works (the client
 * may still revoke it).
 */
export async function sweepOAuth(em: EntityManager): Promise<number> {
  const now = Date.now();
  const grants = await em.nativeDelete(OAuthGrant, {
    createdAt: { $lt: new Date(now - GRANT_KEEP_HOURS * 3_600_000) },
  });
  const unused = await em.nativeDelete(OAuthClient, {
    lastUsedAt: null,
    createdAt: { $lt: new Date(now - UNUSED_CLIENT_HOURS * 3_600_000) },
  });
  const idle = (
    await em.find(
      OAuthClient,
      { lastUsedAt: { $lt: new Date(now - IDLE_CLIENT_DAYS * 86_400_000) } },
      { fields: ['id'], limit: 1000 },
    )
  ).map((c) => c.id);
  const holding = idle.length
    ? new Set(
        (
          await em.find(
            ApiKey,
            { oauthClientId: { $in: idle }, revokedAt: null, expiresAt: { $gt: new Date() } },
            { fields: ['oauthClientId'] },
          )
        ).map((k) => k.oauthClientId),
      )
    : new Set();
  const gone = idle.filter((id) => !holding.has(id));
  const removed = gone.length ? await em.nativeDelete(OAuthClient, { id: { $in: gone } }) : 0;
  return grants + unused + removed;
}
