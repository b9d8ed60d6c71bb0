/**
 * Per web request: the cookies, the signed-in user (from the session cookie), and the CSRF
 * token, bound to the session (src/sessions/csrf.ts). Every form carries `_csrf`, which must be
 * the token of this request's session or pre-session, and a cross-site Origin is refused
 * outright. Cookies are Secure when PUBLIC_URL is https.
 */
import type { NextFunction, Request, Response } from 'express';
import { SESSION_COOKIE, userForSession } from '../sessions/sessions.service.js';
import { csrfTokenFor, csrfTokenMatches, newSecret, PRE_SESSION_COOKIE, SECRET_PATTERN } from '../sessions/csrf.js';
import { parseCookies } from '../kernel/cookies.js';
import type { User } from '../users/user.entity.js';
import type { KeyOrigin } from '../keys/keys.service.js';

type WebContext = {
  user?: User;
  /** The token this request's forms carry. */
  csrf: string;
  /** The secret it is bound to: the session's, or before sign-in the pre-session's. */
  csrfSecret: string;
  cookies: Record<string, string>;
  secure: boolean;
};

declare global {
  namespace Express {
    interface Request {
      web?: WebContext;
    }
  }
}

export const cookieOptions = (secure: boolean, maxAgeMs?: number) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure,
  path: '/',
  ...(maxAgeMs ? { maxAge: maxAgeMs } : {}),
});

/** A new pre-session secret for forms before sign-in; signing in and out replace it. */
export function renewPreSession(res: Response, secure: boolean): string {
  const secret = newSecret();
  res.cookie(PRE_SESSION_COOKIE, secret, cookieOptions(secure));
  return secret;
}

export function webContext(secure: boolean) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const cookies = parseCookies(req.headers.cookie);
      const user = await userForSession(req.em, cookies[SESSION_COOKIE]);
      const held = user ? cookies[SESSION_COOKIE]! : cookies[PRE_SESSION_COOKIE];
      let secret = held && SECRET_PATTERN.test(held) ? held : undefined;
      let token: string | undefined;
      // A first visit's pre-session is made when something first needs it (a form's token, a
      // POST's check): a page without a form, a public page read by anybody, sets no cookie,
      // so that a shared cache may keep it.
      const secretNow = () => (secret ??= renewPreSession(res, secure));
      req.web = {
        get csrf() {
          token ??= csrfTokenFor(secretNow());
          return token;
        },
        get csrfSecret() {
          return secretNow();
        },
        cookies,
        secure,
        user,
      };
      // Pages hold tokens and personal data: never cached, never framed.
      res.setHeader('Cache-Control', 'no-store');
      // Same-origin referrers, so the browser names this origin on form posts (no-referrer makes it `null`).
      res.setHeader('Referrer-Policy', 'same-origin');
      res.setHeader(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The form's `_csrf` against this session's token, and no cross-site Origin. This site is the Host the
 * request was sent to, or PUBLIC_URL's origin: a reverse proxy may pass on its own upstream
 * address as Host (nginx does unless told otherwise), while the browser names the public one.
 */
export function csrfOk(req: Request, publicOrigin: string): boolean {
  // An Origin naming another site is refused outright; `null` (privacy modes, sandboxes) says
  // nothing either way, so the token alone decides.
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    try {
      const named = new URL(origin);
      if (named.host !== req.headers.host && named.origin !== publicOrigin) return false;
    } catch {
      return false;
    }
  }
  return csrfTokenMatches(req.body?._csrf, req.web?.csrfSecret);
}

/** Where a web request came from, as the security log records it: its address and browser. */
export const webOrigin = (req: Request): KeyOrigin => ({
  channel: 'web',
  address: req.ip ?? null,
  client: req.get('user-agent') ?? null,
});
