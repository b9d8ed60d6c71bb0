import { describe, expect, it } from 'vitest';
import { base62, checkToken, checksum, generateToken, hashToken, TOKEN_PREFIX } from '../../src/keys/tokens.js';

describe('API key format', () => {
  it('is shipyard_pat_ + 32 base62 + a 6-character base62 CRC32', () => {
    const token = generateToken();
    expect(token).toMatch(/^shipyard_pat_[0-9A-Za-z]{38}$/);
    const secret = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + 32);
    expect(token.slice(-6)).toBe(checksum(secret));
    expect(checkToken(token)).toEqual({ ok: true });
  });

  it('gives different tokens each time', () => {
    const tokens = new Set(Array.from({ length: 200 }, generateToken));
    expect(tokens.size).toBe(200);
  });

  it('refuses a changed character by its checksum', () => {
    const token = generateToken();
    const i = TOKEN_PREFIX.length + 5;
    const flipped = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    expect(checkToken(flipped)).toEqual({ ok: false, reason: 'checksum' });
  });

  it('refuses the wrong shape', () => {
    expect(checkToken('shipyard_pat_short')).toEqual({ ok: false, reason: 'malformed' });
    expect(checkToken(generateToken().replace('shipyard_pat_', 'ghp_'))).toEqual({ ok: false, reason: 'malformed' });
    expect(checkToken(`${generateToken()}x`)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('encodes base62 with padding', () => {
    expect(base62(0, 6)).toBe('000000');
    expect(base62(61, 1)).toBe('z');
    expect(base62(62, 2)).toBe('10');
    expect(base62(0xffffffff, 6)).toBe('4gfFC3');
  });

  it('hashes with SHA-256 (hex)', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
