/**
 * PostgreSQL stopped mid-run: the API answers 503 problem+json (not a hang, not a crash),
 * /readyz says so, and service returns by itself when the database is back. The test runs its
 * own throwaway PostgreSQL cluster (initdb on a free port), so it never touches a shared one;
 * it is skipped where PostgreSQL's server binaries are not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../src/db/database.js';
import { createApp, type AppDeps } from '../src/app.js';
import { passwordProblems } from '../src/users/password-policy.js';
import { createLogger } from '../src/http/log.js';
import { createUser } from '../src/users/users.service.js';
import { createKey } from '../src/keys/keys.service.js';
import {
  mcpCall,
  refusedWithinASecond,
  uniqueName,
  waitForCache,
  TEST_RATE_LIMIT,
  UPLOAD_MAX_BYTES,
} from './harness.js';
import { postgresFeed, type ChangeFeed } from '../src/db/changes.js';
import { type Cluster, clusterAvailable, startCluster } from './pg-cluster.js';
import type { KeyCache } from '../src/keys/key-cache.js';
import pg from 'pg';

let cluster: Cluster;
let dir = '';
let db: Database;
let server: Server;
let base = '';
let token = '';
/** An app on the test's own cluster, listening on a free port; `config` adds to the settings every one has. */
async function listen(config: Partial<AppDeps['config']>, changes?: ChangeFeed) {
  const app = createApp({
    // These tests sign nobody up: the policy may run on this thread.
    checkPassword: passwordProblems,
    orm: db.orm,
    log: createLogger('silent'),
    changes,
    config: {
      validateResponses: true,
      logLevel: 'silent',
      uploadMaxBytes: UPLOAD_MAX_BYTES,
      mediaDir: join(dir, 'media'),
      rateLimitPerMinute: TEST_RATE_LIMIT,
      failedAuthPerMinute: TEST_RATE_LIMIT,
      ...config,
    },
  });
  const listening: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  return { app, server: listening };
}

describe.skipIf(!clusterAvailable)('the database goes away and comes back', () => {
  beforeAll(async () => {
    cluster = await startCluster();
    dir = mkdtempSync(join(tmpdir(), 'shipyard-faults-'));
    db = await openDatabase({ databaseUrl: cluster.url, dataDir: '', poolMax: 4 });
    const first = await listen({
      // Small, to see that a sign-in the database failed costs nothing.
      signInAttemptsPer15Minutes: 3,
      // Short, so that a frozen database is given up on quickly.
      requestTimeoutMs: 2000,
    });
    server = first.server;
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const em = db.orm.em.fork();
    const name = uniqueName();
    const user = await createUser(em, { username: name, email: `${name}@example.test` });
    token = (
      await createKey(em, { userId: user.id, name: 't', scopes: ['projects.read', 'projects.write'], expiresInDays: 1 })
    ).token;
  }, 120_000);

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await db?.close().catch(() => undefined);
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 while it is down and recovers by itself', async () => {
    const get = () =>
      fetch(`${base}/api/v1/projects`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(15_000),
      });
    /** The list's status once it is 200, or the last of 20 tries a quarter of a second apart. */
    const statusOnceServing = async () => {
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        status = (await get()).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      return status;
    };
    // The first request compiles its part of the contract within the short request timeout: on a
    // busy machine it may answer 503 once. The fault below starts from a service that serves.
    expect(await statusOnceServing()).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    cluster.stop();
    const down = await get();
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(down.headers.get('retry-after')).toBe('5');
    expect((await down.json()).type).toBe('/problems/unavailable');
    const write = await fetch(`${base}/api/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(write.status).toBe(503);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', database: 'unreachable', rateLimits: 'local' });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    cluster.start();
    expect(await statusOnceServing()).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  }, 60_000);

  it('gives back the connections of transactions that a stop of PostgreSQL cut off (none is lost to the pool)', async () => {
    const pool = (await db.orm.em.getConnection().getNativeClient()) as pg.Pool;
    // Four transactions (the pool's size) mid-way when PostgreSQL stops: their COMMIT fails, then their ROLLBACK.
    let started = 0;
    const cut = Array.from({ length: 4 }, () =>
      db.orm.em.fork().transactional(async (tem) => {
        await tem.execute('select 1');
        started++;
        while (started < 4) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, 500));
      }),
    );
    while (started < 4) await new Promise((r) => setTimeout(r, 10));
    cluster.stop();
    expect((await Promise.allSettled(cut)).every((r) => r.status === 'rejected')).toBe(true);
    cluster.start();
    let checkedOut = pool.totalCount - pool.idleCount;
    for (let i = 0; i < 40 && checkedOut > 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      checkedOut = pool.totalCount - pool.idleCount;
    }
    expect(checkedOut).toBe(0);
    // And the pool serves again, all four at once.
    const rows = await Promise.all(Array.from({ length: 4 }, () => db.orm.em.fork().execute('select 1 as one')));
    expect(rows.flat()).toHaveLength(4);
  }, 60_000);

  it('answers an MCP write cut by the outage as REST does: unavailable, when to retry, and that the same idempotencyKey is safe', async () => {
    const api = { apiUrl: `${base}/api/v1` };
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const project = await (
      await fetch(`${api.apiUrl}/projects`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Mill' }) })
    ).json();
    const args = { projectId: project.id, title: 'Cut off', idempotencyKey: 'cut-off-1' };
    // The roadmap write waits on the project's row lock, held here, so that the outage finds it mid-way.
    const holder = new pg.Client({ connectionString: cluster.url });
    holder.on('error', () => undefined);
    await holder.connect();
    await holder.query('begin');
    await holder.query('select id from projects where id = $1 for update', [project.id]);
    const call = mcpCall(api, token, 'create_milestone', args);
    await expect
      .poll(
        async () =>
          (
            await holder.query(
              `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
            )
          ).rows[0].n,
        // Within the server's 2 s deadline, which would answer first otherwise.
        { timeout: 1_500, interval: 20 },
      )
      .toBe(1);
    cluster.stop();
    try {
      const cut = await call;
      expect(cut.status).toBe(200);
      const result = cut.json.result;
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(/^Service unavailable: the database cannot be reached right now/);
      expect(result.content[0].text).toMatch(/about 5 seconds/);
      expect(result.content[0].text).toMatch(/same idempotencyKey: the create happens at most once/);
      expect(result.content[0].text).not.toMatch(/Internal error/);
      expect(result._meta['shipyard.dev/problem']).toEqual({
        type: '/problems/unavailable',
        code: 'unavailable',
        status: 503,
        retryAfter: 5,
      });
    } finally {
      await holder.end().catch(() => undefined);
      cluster.start();
    }
    // The retry with the same key makes it once; another retry replays it.
    let retried: any;
    for (let i = 0; i < 40; i++) {
      retried = (await mcpCall(api, token, 'create_milestone', args)).json;
      if (!retried.result?.isError) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(retried.result.isError, JSON.stringify(retried)).toBeFalsy();
    const again = (await mcpCall(api, token, 'create_milestone', args)).json;
    expect(again.result.structuredContent.id).toBe(retried.result.structuredContent.id);
    const roadmap = await (await fetch(`${api.apiUrl}/projects/${project.id}/milestones`, { headers: auth })).json();
    expect(roadmap.items.filter((m: { title: string }) => m.title === 'Cut off')).toHaveLength(1);
  }, 60_000);

  it('answers a web page that needs it with a 503 page while it is down, not a 500', async () => {
    // A sign-in form as a browser sends it: the pre-session cookie and its CSRF token (no database needed).
    const form = await fetch(`${base}/signin`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(await form.text())![1]!;
    const signIn = () =>
      fetch(`${base}/signin`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, login: 'nobody', password: 'not the password' }),
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
    expect((await signIn()).status).toBe(401);

    cluster.stop();
    try {
      for (let i = 0; i < 4; i++) {
        const down = await signIn();
        expect(down.status).toBe(503);
        expect(down.headers.get('content-type')).toMatch(/^text\/html/);
        expect(down.headers.get('retry-after')).toBe('5');
        expect(await down.text()).toContain('The database cannot be reached right now; nothing was changed.');
      }
    } finally {
      cluster.start();
    }
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await signIn()).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(401);
    // The 503s gave their units back: two wrong guesses spent two of three, one is left.
    expect((await signIn()).status).toBe(401);
    expect((await signIn()).status).toBe(429);
  }, 60_000);

  it('answers every web page and the API with a 503 within the deadline while the database is frozen', async () => {
    // Frozen, not stopped: every process of the cluster stopped with SIGSTOP, so connections hang.
    cluster.freeze();
    try {
      const started = Date.now();
      const [page, api] = await Promise.all([
        // Any page a session cookie comes with looks the session up first.
        fetch(`${base}/settings/keys`, {
          headers: { cookie: `shipyard_session=${'a'.repeat(43)}` },
          redirect: 'manual',
          signal: AbortSignal.timeout(15_000),
        }),
        fetch(`${base}/api/v1/projects`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(15_000),
        }),
      ]);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('retry-after')).toBe('5');
      expect(await page.text()).toContain('This page took longer than 2 s to answer');
      expect(api.status).toBe(503);
      expect((await api.json()).type).toBe('/problems/timeout');
    } finally {
      cluster.thaw();
    }
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      status = (await fetch(`${base}/api/v1/projects`, { headers: { authorization: `Bearer ${token}` } })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
  }, 60_000);

  it('refuses a revoked key within a second on an instance whose listening connection has stalled', async () => {
    const changes = postgresFeed(cluster.url);
    const { server: listening, app } = await listen({ keyCacheSeconds: 10 }, changes);
    const instance = { apiUrl: `http://127.0.0.1:${(listening.address() as AddressInfo).port}/api/v1` };
    const keys = app.locals.keyCache as KeyCache;
    let stalled: string | undefined;
    try {
      const em = db.orm.em.fork();
      const name = uniqueName();
      const user = await createUser(em, { username: name, email: `${name}@example.test` });
      const key = await createKey(em, { userId: user.id, name: 't', scopes: ['content.read'], expiresInDays: 1 });
      await waitForCache({ ...instance, keyCache: keys }, key.token);
      // The listening connection's backend stops answering (SIGSTOP), its socket still open.
      const [row] = await em.execute<{ pid: number }[]>(
        `select pid from pg_stat_activity where application_name = 'shipyard-listener'`,
      );
      stalled = String(row!.pid);
      execFileSync('kill', ['-STOP', stalled]);
      await em.execute('update api_keys set revoked_at = now() where id = ?', [key.key.id]);
      const res = await refusedWithinASecond(instance, key.token);
      expect(res.status).toBe(401);
    } finally {
      if (stalled) execFileSync('kill', ['-CONT', stalled]);
      keys.close();
      listening.closeAllConnections();
      await new Promise((r) => listening.close(r));
    }
  }, 60_000);
});

describe('the embedded database', () => {
  it('hears key changes once its one connection comes free, after the first wait for it gave up', async () => {
    const embedded = await openDatabase({ dataDir: '', inMemory: true });
    const pool = (await embedded.orm.em.getConnection().getNativeClient()) as pg.Pool;
    // Held past the pool's wait (10 s), as a long transaction or a process busy at start would.
    const held = await pool.connect();
    const live: boolean[] = [];
    const notices: string[] = [];
    const stop = embedded.changes.subscribe('shipyard_access', {
      onNotice: (payload) => notices.push(payload),
      onLive: (value) => live.push(value),
    });
    try {
      await expect.poll(() => live, { timeout: 20_000, interval: 100 }).toEqual([false]);
      held.release();
      await expect.poll(() => live, { timeout: 10_000, interval: 50 }).toEqual([false, true]);
      const em = embedded.orm.em.fork();
      const name = uniqueName();
      const user = await createUser(em, { username: name, email: `${name}@example.test` });
      const {
        key: { id },
      } = await createKey(em, { userId: user.id, name: 't', scopes: ['projects.read'], expiresInDays: 1 });
      await em.execute('update api_keys set revoked_at = now() where id = ?', [id]);
      await expect.poll(() => notices, { timeout: 5_000, interval: 50 }).toContain(`key:${id}`);
    } finally {
      stop();
      await embedded.close();
    }
  }, 60_000);
});
