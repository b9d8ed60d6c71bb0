/** When a key is made, refused, regenerated and stops working: at the service, without a server. */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import {
  authenticateToken,
  createKey,
  MAX_ACTIVE_KEYS,
  regenerateKey,
  revokeKey,
} from '../../src/keys/keys.service.js';

const db = useServiceDatabase();
const origin = { channel: 'web' as const, address: '127.0.0.1', client: 'test' };

describe('keys at the service', () => {
  it('always expires, carries only known scopes, and answers for its owner until revoked', async () => {
    const { user } = await db.user();
    expect(
      await refusal(createKey(db.em(), { userId: user.id, name: 'k', scopes: ['projects.read'], expiresInDays: 0 })),
    ).toEqual({ status: 400, code: 'validation' });
    expect(
      await refusal(createKey(db.em(), { userId: user.id, name: 'k', scopes: ['admin'], expiresInDays: 7 })),
    ).toMatchObject({ status: 400 });
    const { key, token } = await createKey(db.em(), {
      userId: user.id,
      name: 'k',
      scopes: ['projects.read'],
      expiresInDays: 7,
    });
    expect(await authenticateToken(db.em(), token)).toMatchObject({ userId: user.id, scopes: ['projects.read'] });
    await revokeKey(db.em(), key.id, user.id);
    expect(await refusal(authenticateToken(db.em(), token))).toEqual({ status: 401, code: 'invalid-token' });
  });

  it(`refuses the ${MAX_ACTIVE_KEYS + 1}th active key of an account`, async () => {
    const { user } = await db.user();
    for (let i = 0; i < MAX_ACTIVE_KEYS; i++)
      await createKey(db.em(), { userId: user.id, name: `k${i}`, scopes: ['content.read'], expiresInDays: 1 });
    expect(
      await refusal(
        createKey(db.em(), { userId: user.id, name: 'one more', scopes: ['content.read'], expiresInDays: 1 }),
      ),
    ).toEqual({ status: 409, code: 'key-limit-reached' });
  });

  it('regenerates an active key once: the old one is refused after, and cannot be regenerated again', async () => {
    const { user } = await db.user();
    const { key, token } = await createKey(db.em(), {
      userId: user.id,
      name: 'deploy',
      scopes: ['projects.write'],
      expiresInDays: 30,
    });
    const next = await regenerateKey(db.em(), { id: key.id, ownerId: user.id, overlapHours: 0, origin });
    expect(next.key.name).toBe('deploy');
    expect(await refusal(authenticateToken(db.em(), token))).toEqual({ status: 401, code: 'invalid-token' });
    expect((await authenticateToken(db.em(), next.token)).scopes).toEqual(['projects.write']);
    expect(await refusal(regenerateKey(db.em(), { id: key.id, ownerId: user.id, overlapHours: 0, origin }))).toEqual({
      status: 409,
      code: 'key-not-regenerable',
    });
    // Another person's key is not found, not refused.
    const other = await db.user();
    expect(
      await refusal(regenerateKey(db.em(), { id: next.key.id, ownerId: other.user.id, overlapHours: 0, origin })),
    ).toEqual({ status: 404, code: 'not-found' });
  });
});
