import type { Request } from 'express';
import { invalidToken } from './problem.js';

/**
 * The token from `Authorization: Bearer <token>`, the only place a key is accepted (never a
 * query string, never a cookie). Throws a 401 problem for a missing header or another scheme.
 */
export function bearerToken(req: Request): string {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw invalidToken('This request needs an API key: send `Authorization: Bearer shipyard_pat_…`.');
  }
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw invalidToken('Use the Bearer scheme: `Authorization: Bearer shipyard_pat_…`.');
  return m[1]!;
}

export function hasBearer(req: Request): boolean {
  return /^Bearer /i.test(req.headers.authorization ?? '');
}
