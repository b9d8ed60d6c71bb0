import type { Request } from 'express';
import { missingToken, ProblemError } from '../../kernel/problem.js';

/**
 * The token from `Authorization: Bearer <token>`, the only place a key is accepted (never a
 * query string, never a cookie). A missing header or another scheme is a 401 whose challenge
 * names no error (no key was presented); a bad key is `invalid_token` (src/keys/keys.service.ts).
 */
export function bearerToken(req: Request): string {
  // Node keeps the first of two Authorization headers and drops the other: which key was meant
  // is unknowable, so it is refused rather than guessed (RFC 6750 §3.1: one method, once).
  if ((req.headersDistinct.authorization?.length ?? 0) > 1) throw twoCredentials();
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw missingToken('This request needs an API key: send `Authorization: Bearer shipyard_pat_…`.');
  }
  if (/^Bearer\s*$/i.test(header)) {
    throw missingToken(
      'The Authorization header says Bearer but no key follows it; the variable that should hold the key is probably unset (`Authorization: Bearer shipyard_pat_…`).',
    );
  }
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw missingToken('Use the Bearer scheme: `Authorization: Bearer shipyard_pat_…`.');
  return m[1]!;
}

export function hasBearer(req: Request): boolean {
  return /^Bearer /i.test(req.headers.authorization ?? '');
}

const twoCredentials = () =>
  new ProblemError(
    400,
    'malformed-request',
    'More than one Authorization header',
    'Send the API key once, in one `Authorization: Bearer shipyard_pat_…` header; this request has more than one.',
    {},
    { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
  );
