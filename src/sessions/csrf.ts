/**
 * CSRF tokens, bound to the session they protect (a synchronizer token without storage): the
 * token is an HMAC of the session's own secret, which only the HttpOnly session cookie carries.
 * A page on another site can make the browser send that cookie, but can neither read it nor the
 * token; a token taken from one session is worth nothing in another; and signing in starts a
 * new session, so every token from before is void (it rotates at sign-in).
 *
 * Before sign-in (the sign-in and sign-up forms) the token is bound the same way to a random
 * pre-session secret in its own HttpOnly cookie, which signing in and out replaces.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The pre-session secret's cookie. */
export const PRE_SESSION_COOKIE = 'shipyard_csrf';
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const newSecret = (): string => randomBytes(32).toString('base64url');

/** The token for forms and the X-CSRF-Token header of a session (or pre-session) whose secret this is. */
export const csrfTokenFor = (secret: string): string =>
  createHmac('sha256', secret).update('shipyard csrf token v1').digest('base64url');

/** Whether `sent` is the token of `secret`, compared in constant time. */
export function csrfTokenMatches(sent: unknown, secret: string | undefined): boolean {
  if (typeof sent !== 'string' || !secret) return false;
  const expected = Buffer.from(csrfTokenFor(secret));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
