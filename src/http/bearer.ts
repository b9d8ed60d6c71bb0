import type { Request } from 'express';
import { missingToken } from './problem.js';

/**
 * The token from `Authorization: Bearer <token>`, the only place a key is accepted (never a
 * query string, never a cookie). A missing header or another scheme is a 401 whose challenge
 * names no error (no key was presented); a bad key is `invalid_token` (src/keys/keys.service.ts).
 */
export function bearerToken(req: Request): string {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw missingToken('This request needs an API key: send `Authorization: Bearer shipyard_pat_…`.');
  }
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw missingToken('Use the Bearer scheme: `Authorization: Bearer shipyard_pat_…`.');
  return m[1]!;
}

export function hasBearer(req: Request): boolean {
  return /^Bearer /i.test(req.headers.authorization ?? '');
}
