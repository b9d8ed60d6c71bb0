/** OWASP API2:2023 Broken Authentication — keys that must not work, and keys that must not leak. */
import { regenerateKey } from '../../src/keys/keys.service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http, { type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  startServer,
  userWithKey,
  raw,
  waitForCache,
  refusedWithinASecond,
  acceptedWithinASecond,
  UPLOAD_MAX_BYTES,
  TEST_RATE_LIMIT,
  type TestServer,
} from '../harness.js';
import { createApp } from '../../src/app.js';
import { passwordProblems } from '../../src/users/password-policy.js';
import { createLogger } from '../../src/http/log.js';
import { Writable } from 'node:stream';
import type { KeyCache } from '../../src/keys/key-cache.js';
import { ApiKey } from '../../src/keys/api-key.entity.js';
import { setAccountDisabled } from '../../src/sessions/account-access.js';
import { generateToken } from '../../src/keys/tokens.js';

let t: TestServer;
/** The service's log lines, as it writes them (the access log on, to check what it says). */
const logged: string[] = [];
beforeAll(async () => {
  const logTo = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  t = await startServer({ logTo });
});
afterAll(async () => {
  await t?.close();
});

describe('API2 authentication', () => {
  it('never accepts a key from a URL, a cookie or a lookalike scheme', async () => {
    const { token } = await userWithKey(t, ['profile.read']);
    for (const init of <{ path: string; headers?: Record<string, string> }[]>[
      { path: `/users/me?api_key=${token}` },
      { path: `/users/me?access_token=${token}` },
      { path: '/users/me', headers: { cookie: `shipyard_session=${token}` } },
      { path: '/users/me', headers: { authorization: `Token ${token}` } },
      { path: '/users/me', headers: { authorization: `Bearer${token}` } },
      { path: '/users/me', headers: { authorization: `Bearer ${token} extra` } },
    ]) {
      expect((await raw(t, 'GET', init.path, { headers: init.headers })).status, JSON.stringify(init)).toBe(401);
    }
  });

  it('slows down key guessing from one address (429 after the failed-auth budget), without locking out its valid keys', async () => {
    const own = await startServer({ failedAuthPerMinute: 5 });
    try {
      const statuses = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await raw(own, 'GET', '/users/me', { token: generateToken() })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect((await raw(own, 'GET', '/users/me')).status).toBe(429); // no key at all is a failure too
      // A bad neighbour at the same address spent that budget: a valid key is still served,
      // on REST and MCP, and so is the public spec.
      const { token } = await userWithKey(own, ['profile.read', 'projects.read']);
      expect((await raw(own, 'GET', '/users/me', { token })).status).toBe(200);
      expect((await raw(own, 'GET', '/openapi.json')).status).toBe(200);
      const mcp = await raw(own, 'POST', '/mcp', {
        token,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_my_projects', arguments: {} } },
      });
      expect(mcp.status).toBe(200);
      const badMcp = await raw(own, 'POST', '/mcp', {
        token: generateToken(),
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      });
      expect(badMcp.status).toBe(429);
      expect(badMcp.json.error.message).toMatch(/retry in \d+ seconds/);
      expect((await raw(own, 'GET', '/users/me', { token: generateToken() })).status).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('never writes a key into the log; each request is logged with its full path, without the query string', async () => {
    const { token } = await userWithKey(t, ['profile.read', 'projects.read']);
    logged.length = 0;
    await raw(t, 'GET', `/users/me?token=${token}`, { token });
    await raw(t, 'GET', '/users/me', { token });
    await raw(t, 'POST', '/mcp', {
      token,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_my_projects', arguments: {} } },
    });
    const all = logged.join('');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(13, 30));
    const requests = all
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l));
    expect(requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ['GET', '/api/v1/users/me', 400],
      ['GET', '/api/v1/users/me', 200],
      ['POST', '/api/v1/mcp', 200],
    ]);
  });

  it('refuses a revoked or regenerated key, or the key of a disabled or deleted account, on every instance within a second', async () => {
    // Two instances on one database, each caching keys for 10 minutes: only the database's
    // notices can tell them in time.
    const a = await startServer({ keyCacheSeconds: 600 });
    const app = createApp({
      // These tests sign nobody up: the policy may run on this thread.
      checkPassword: passwordProblems,
      orm: a.db.orm,
      log: createLogger('silent'),
      storage: a.storage,
      changes: a.db.changes,
      config: {
        validateResponses: true,
        logLevel: 'silent',
        uploadMaxBytes: UPLOAD_MAX_BYTES,
        mediaDir: mkdtempSync(join(tmpdir(), 'sy-')),
        rateLimitPerMinute: TEST_RATE_LIMIT,
        failedAuthPerMinute: TEST_RATE_LIMIT,
        keyCacheSeconds: 600,
      },
    });
    const server: Server = await new Promise((r) => {
      const s = app.listen(0, '127.0.0.1', () => r(s));
    });
    const b = {
      apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
      keyCache: app.locals.keyCache as KeyCache,
    };
    const everywhere = async (token: string) => {
      for (const instance of [a, b]) await waitForCache(instance, token);
    };
    try {
      const revoked = await userWithKey(a, ['content.read', 'projects.read']);
      const disabled = await userWithKey(a, ['content.read', 'projects.read']);
      const deleted = await userWithKey(a, ['content.read']);
      const regenerated = await userWithKey(a, ['content.read']);
      for (const u of [revoked, disabled, deleted, regenerated]) await everywhere(u.token);

      await a.db.orm.em.fork().nativeUpdate(ApiKey, { user: revoked.user.id }, { revokedAt: new Date() }); // as the CLI does, elsewhere
      await setAccountDisabled(a.db.orm.em.fork(), disabled.user.username, true);
      await a.db.orm.em.fork().execute('delete from users where id = ?', [deleted.user.id]);
      // Regenerated on the web with no overlap (src/web/keys.pages.ts): the old secret stops at once.
      const old = await a.db.orm.em.fork().findOneOrFail(ApiKey, { user: regenerated.user.id });
      const fresh = await regenerateKey(a.db.orm.em.fork(), {
        id: old.id,
        ownerId: regenerated.user.id,
        overlapHours: 0,
        origin: { channel: 'web' },
      });
      for (const instance of [a, b]) {
        for (const [u, why] of [
          [revoked, /revoked/],
          [disabled, /disabled, so none of its keys work. Ask the service's operator to enable it/],
          [deleted, /not known/],
          [regenerated, /revoked/],
        ] as const) {
          const res = await refusedWithinASecond(instance, u.token);
          expect(res.status).toBe(401);
          expect(res.json.detail).toMatch(why);
        }
        const mcp = await raw(instance, 'POST', '/mcp', {
          token: disabled.token,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        });
        expect(mcp.status).toBe(401);
      }
      // Enabled again, the account's keys work again, everywhere: once the notice is heard, as
      // a refusal is (a key of the disabled account may be cached as refused until then).
      await setAccountDisabled(a.db.orm.em.fork(), disabled.user.username, false);
      for (const instance of [a, b]) {
        expect((await acceptedWithinASecond(instance, disabled.token)).status).toBe(200);
        expect((await raw(instance, 'GET', '/platform/versions', { token: fresh.token })).status).toBe(200);
      }

      // A key's hash replaced in SQL, and the keys table emptied with TRUNCATE: the same.
      const rehashed = await userWithKey(a, ['content.read']);
      for (const u of [rehashed, disabled]) await everywhere(u.token);
      await a.db.orm.em
        .fork()
        .execute('update api_keys set token_hash = md5(random()::text) || md5(random()::text) where user_id = ?', [
          rehashed.user.id,
        ]);
      for (const instance of [a, b]) expect((await refusedWithinASecond(instance, rehashed.token)).status).toBe(401);
      await a.db.orm.em.fork().execute('truncate api_keys cascade'); // the keys' sightings go with them
      for (const instance of [a, b]) expect((await refusedWithinASecond(instance, disabled.token)).status).toBe(401);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      b.keyCache.close();
      await a.close();
    }
  });
});

describe('how a key is sent', () => {
  /**
   * A request with each header exactly as given: a list of values is that many header lines on
   * the wire (fetch would join them into one).
   */
  function send(path: string, headers: Record<string, string | string[]>, method = 'GET', body?: string) {
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; json: any }>((resolve, reject) => {
      const req = http.request(`${t.apiUrl}${path}`, { method }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, json: JSON.parse(text) }));
      });
      for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses two Authorization headers with 400 invalid_request, whichever of them is valid', async () => {
    const ada = await userWithKey(t, ['profile.read']);
    const bob = await userWithKey(t, ['profile.read']);
    for (const pair of [
      [`Bearer ${ada.token}`, `Bearer ${bob.token}`],
      [`Bearer ${ada.token}`, 'Bearer shipyard_pat_wrong'],
      ['Bearer shipyard_pat_wrong', `Bearer ${ada.token}`],
    ]) {
      const res = await send('/users/me', { authorization: pair });
      expect(res.status, pair.join(' + ')).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_request"');
      expect(res.json.detail).toMatch(/more than one/);
    }
    const one = await send('/users/me', { authorization: `Bearer ${ada.token}` });
    expect(one.status).toBe(200);
    expect(one.json.id).toBe(ada.user.id);
  });

  it('refuses two Authorization headers at the MCP endpoint too', async () => {
    const ada = await userWithKey(t, ['projects.read']);
    const res = await send(
      '/mcp',
      {
        authorization: [`Bearer ${ada.token}`, `Bearer ${ada.token}`],
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      'POST',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    );
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: -32600, message: expect.stringMatching(/more than one/) });
  });

  it('says that the key is missing when `Bearer` comes with nothing after it (an unset variable)', async () => {
    const res = await send('/users/me', { authorization: 'Bearer ' });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/no key follows it/);
  });
});
