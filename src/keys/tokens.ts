/**
 * The API key format, GitHub-style: `shipyard_pat_` + 32 random base62 characters + a
 * 6-character base62 CRC32 of those 32. The checksum lets a typo or a made-up token be refused
 * without touching the database, and lets secret scanners recognise a real key.
 * Only the SHA-256 of the whole token is stored; the secret has ~190 bits of entropy, so a
 * fast hash is enough (no password stretching is needed for a random secret).
 */
import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const TOKEN_PREFIX = 'shipyard_pat_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

export function base62(n: number, width: number): string {
  let out = '';
  let rest = n;
  do {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return out.padStart(width, '0');
}

export function checksum(secret: string): string {
  return base62(crc32(secret) >>> 0, CHECKSUM_LENGTH);
}

export function generateToken(): string {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += ALPHABET[randomInt(62)];
  return `${TOKEN_PREFIX}${secret}${checksum(secret)}`;
}

export type TokenCheck = { ok: true } | { ok: false; reason: 'malformed' | 'checksum' };

/** Shape and checksum only: no database read. */
export function checkToken(token: string): TokenCheck {
  const m = TOKEN_PATTERN.exec(token);
  if (!m) return { ok: false, reason: 'malformed' };
  return checksum(m[1]!) === m[2] ? { ok: true } : { ok: false, reason: 'checksum' };
}

/** SHA-256, hex, of an API key or a web session secret (what the database keeps). The one-shot `crypto.hash` (Node 21.7+): no Hash object per request as createHash makes. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}
