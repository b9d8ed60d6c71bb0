import { describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, keyFor, waitForCache, refusedWithinASecond, useServer } from './harness.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { authenticateToken, revokeKey } from '../src/keys/keys.service.js';
import { generateToken } from '../src/keys/tokens.js';
import type { EntityManager } from '@mikro-orm/postgresql';

const { t } = useServer();

/** A 401; `challenge` is the WWW-Authenticate: `Bearer` alone when no key was presented (RFC 6750 §3.1). */
function expect401(res: Awaited<ReturnType<typeof raw>>, detail: RegExp, challenge = 'Bearer error="invalid_token"') {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('www-authenticate')).toBe(challenge);
  expect(res.json).toMatchObject({ type: '/problems/invalid-token', status: 401 });
  expect(res.json.detail).toMatch(detail);
}

describe('authentication (401)', () => {
  it('accepts a valid key', async () => {
    const { token } = await userWithKey(t, ['profile.read']);
    const res = await raw(t, 'GET', '/users/me', { token });
    expect(res.status).toBe(200);
  });

  it('refuses a missing header', async () => {
    expect401(await raw(t, 'GET', '/users/me'), /needs an API key/, 'Bearer');
  });

  it('refuses another scheme, and a scheme that only contains "bearer"', async () => {
    const { token } = await userWithKey(t, ['profile.read']);
    expect401(
      await raw(t, 'GET', '/users/me', { headers: { authorization: `Basic ${token}` } }),
      /Bearer scheme/,
      'Bearer',
    );
    expect401(
      await raw(t, 'GET', '/users/me', { headers: { authorization: `xbearerx ${token}` } }),
      /Bearer scheme/,
      'Bearer',
    );
  });

  it('refuses a malformed key', async () => {
    expect401(await raw(t, 'GET', '/users/me', { token: 'shipyard_pat_nope' }), /malformed/);
    expect401(await raw(t, 'GET', '/users/me', { token: 'ghp_0123456789abcdef' }), /malformed/);
  });

  it('refuses a wrong checksum without reading the database', async () => {
    const token = generateToken();
    const bad = token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
    expect401(await raw(t, 'GET', '/users/me', { token: bad }), /checksum/);
    // The same check, with an EntityManager that fails on any use: it is never touched.
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('database read');
        },
      },
    ) as EntityManager;
    await expect(authenticateToken(untouchable, bad)).rejects.toMatchObject({ status: 401, slug: 'invalid-token' });
  });

  it('refuses an unknown key that is well formed', async () => {
    expect401(await raw(t, 'GET', '/users/me', { token: generateToken() }), /not known/);
  });

  it('refuses an expired key', async () => {
    const { user } = await userWithKey(t, ['profile.read']);
    const token = await keyFor(t, user.id, ['profile.read']);
    const em = t.db.orm.em.fork();
    await em.nativeUpdate(
      ApiKey,
      { last4: token.slice(-4), user: user.id },
      { expiresAt: new Date(Date.now() - 1000) },
    );
    expect401(await raw(t, 'GET', '/users/me', { token }), /expired/);
  });

  it('refuses a revoked key at once', async () => {
    const em = t.db.orm.em.fork();
    const { user, token } = await userWithKey(t, ['profile.read']);
    expect((await raw(t, 'GET', '/users/me', { token })).status).toBe(200);
    const key = await em.findOneOrFail(ApiKey, { user: user.id });
    await revokeKey(em, key.id);
    expect401(await raw(t, 'GET', '/users/me', { token }), /revoked/);
  });

  it('never takes a key from the query string or a cookie', async () => {
    const { token } = await userWithKey(t, ['profile.read']);
    const inQuery = await raw(t, 'GET', `/users/me?access_token=${token}`);
    expect(inQuery.status).toBe(401);
    const inCookie = await raw(t, 'GET', '/users/me', {
      headers: { cookie: `token=${token}; shipyard_session=${token}` },
    });
    expect(inCookie.status).toBe(401);
  });
});

describe('the key cache (KEY_CACHE_SECONDS)', () => {
  it('refuses a key revoked by another process at once, however long keys are cached', async () => {
    const cached = await startServer({ keyCacheSeconds: 600 });
    try {
      const { user, token } = await userWithKey(cached, ['profile.read']);
      await waitForCache(cached, token);
      // Revoked the way the operator CLI or another instance does it: in the database only.
      await cached.db.orm.em.fork().nativeUpdate(ApiKey, { user: user.id }, { revokedAt: new Date() });
      expect401(await refusedWithinASecond(cached, token), /revoked/);
    } finally {
      await cached.close();
    }
  });

  it('still checks expiry on every request, within the cache bound', async () => {
    const { user, token } = await userWithKey(t, ['profile.read']);
    // The key expires 1.5 s from now; the server caches it for 10 s on first use.
    await t.db.orm.em.fork().nativeUpdate(ApiKey, { user: user.id }, { expiresAt: new Date(Date.now() + 1_500) });
    expect((await raw(t, 'GET', '/users/me', { token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_600));
    expect401(await raw(t, 'GET', '/users/me', { token }), /expired/);
  });
});
