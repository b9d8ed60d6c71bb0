/**
 * Per web request: the cookies, the signed-in user (from the session cookie), and the CSRF
 * token. CSRF: every form carries `_csrf`, which must equal the `shipyard_csrf` cookie (HttpOnly,
 * SameSite=Lax) — a page elsewhere can neither read that cookie nor set the field — and a
 * cross-site Origin is refused outright. Cookies are Secure when PUBLIC_URL is https.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { SESSION_COOKIE, userForSession } from './sessions.service.js';
import type { User } from '../users/user.entity.js';

export const CSRF_COOKIE = 'shipyard_csrf';

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 1) continue;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      // a cookie that is not valid percent-encoding is ignored
    }
  }
  return out;
}

export type WebContext = { user?: User; csrf: string; cookies: Record<string, string>; secure: boolean };

declare global {
  namespace Express {
    interface Request {
      web?: WebContext;
    }
  }
}

export const cookieOptions = (secure: boolean, maxAgeMs?: number) =>
  ({ httpOnly: true, sameSite: 'lax' as const, secure, path: '/', ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) });

export function webContext(secure: boolean) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const cookies = parseCookies(req.headers.cookie);
      let csrf = cookies[CSRF_COOKIE];
      if (!csrf || !/^[A-Za-z0-9_-]{43}$/.test(csrf)) {
        csrf = randomBytes(32).toString('base64url');
        res.cookie(CSRF_COOKIE, csrf, cookieOptions(secure));
      }
      req.web = { csrf, cookies, secure, user: await userForSession(req.em, cookies[SESSION_COOKIE]) };
      // Pages hold tokens and personal data: never cached, never framed.
      res.setHeader('Cache-Control', 'no-store');
      // Same-origin referrers, so the browser names this origin on form posts (no-referrer makes it `null`).
      res.setHeader('Referrer-Policy', 'same-origin');
      res.setHeader('Content-Security-Policy',
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The form's `_csrf` against the cookie, and no cross-site Origin. This site is the Host the
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
  const sent = typeof req.body?._csrf === 'string' ? req.body._csrf : '';
  // The validated cookie value (a malformed cookie was replaced by a fresh one, which no form holds yet).
  const cookie = req.web?.csrf ?? '';
  return sent.length === cookie.length && cookie.length > 0 && timingSafeEqual(Buffer.from(sent), Buffer.from(cookie));
}
