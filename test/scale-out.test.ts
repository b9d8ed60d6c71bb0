/**
 * Several instances as an operator runs them: three `bin/shipyard serve` processes started at
 * once on an empty database, behind HAProxy (round robin, retry on a refused connection), with
 * PgBouncer in transaction mode in front of PostgreSQL on default settings plus
 * DATABASE_DIRECT_URL, and one Redis. Through the balancer: no 5xx, one key's budget shared,
 * positions 1..N under concurrent writes, each webhook event delivered once; a key revoked by the
 * CLI through the pooler is refused by all three within a second. Skipped where pgbouncer,
 * haproxy, redis-server or PostgreSQL's server binaries are missing (.ci/run installs them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, uniqueName } from './harness.js';
import { type Cluster, clusterAvailable, startCluster } from './pg-cluster.js';
import { type Pgbouncer, pgbouncerAvailable, startPgbouncer } from './pgbouncer.js';
import { Receiver, waitFor } from './webhook-receiver.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { createUser } from '../src/users/users.service.js';
import { createKey } from '../src/keys/keys.service.js';
import type { ScopeId } from '../src/kernel/scopes.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { hashToken } from '../src/keys/tokens.js';

const haproxy = ['/usr/sbin/haproxy', 'haproxy'].find((b) => spawnSync(b, ['-v']).status === 0);
const redisAvailable = spawnSync('redis-server', ['--version']).status === 0;
if (!haproxy) {
  if (process.env.REQUIRE_SCALE_OUT === '1') throw new Error('REQUIRE_SCALE_OUT=1 but haproxy is not installed');
  console.warn('haproxy is not installed (apt-get install haproxy): the tests behind it are skipped');
}
const ready = clusterAvailable && pgbouncerAvailable && Boolean(haproxy) && redisAvailable;
const BUDGET = 40;

const dir = mkdtempSync(join(tmpdir(), 'shipyard-scale-'));
const children: ChildProcess[] = [];
let cluster: Cluster;
let bouncer: Pgbouncer;
let receiver: Receiver;
let db: Database;
let env: Record<string, string>;
/** The balancer's address, and each instance's own. */
let site = '';
const instances: string[] = [];
const logs: string[] = ['', '', ''];

function start(cmd: string, args: string[], extra: { env?: Record<string, string>; log?: (s: string) => void } = {}) {
  const child = spawn(cmd, args, { env: { ...process.env, ...extra.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => extra.log?.(String(d)));
  child.stderr!.on('data', (d) => extra.log?.(String(d)));
  children.push(child);
  return child;
}

async function key(scopes: ScopeId[]) {
  const em = db.orm.em.fork();
  const name = uniqueName();
  const user = await createUser(em, { username: name, email: `${name}@example.test` });
  return (await createKey(em, { userId: user.id, name: 'scale', scopes, expiresInDays: 1 })).token;
}

const call = (base: string, token: string, path: string, init: RequestInit = {}) =>
  fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    signal: AbortSignal.timeout(15_000),
  });

/** The JSON of an answer, or an error that says what came instead (HAProxy answers its own errors in HTML). */
async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${res.status} ${res.headers.get('content-type')}: ${text.slice(0, 300)}`);
  }
}

describe.skipIf(!ready)('three instances behind HAProxy, PgBouncer and Redis', () => {
  beforeAll(async () => {
    cluster = await startCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('create database shipyard');
    await admin.end();
    bouncer = await startPgbouncer(cluster.url);
    const direct = cluster.url.replace(/\/postgres$/, '/shipyard');
    const redisPort = await freePort();
    start('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    receiver = new Receiver();
    await receiver.start();
    env = {
      DATABASE_URL: bouncer.url('shipyard'),
      DATABASE_DIRECT_URL: direct,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      SECRET_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_ALLOW_LOCAL_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: String(BUDGET),
      GITHUB_SYNC_INTERVAL_MINUTES: '0',
      LOG_LEVEL: 'error',
    };
    // Three instances at once on the empty database.
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      const log = (s: string) => {
        logs[i] += s;
      };
      start('bin/shipyard', ['serve'], {
        env: { ...env, PORT: String(port), DATA_DIR: join(dir, `data-${i}`), LOG_LEVEL: 'info' },
        log,
      });
      instances.push(`http://127.0.0.1:${port}`);
    }
    await waitFor(async () => (logs.every((l) => l.includes('shipyard listening')) ? true : undefined), 150_000).catch(
      () => {
        throw new Error(`not every instance started:\n${logs.map((l) => l.slice(-1500)).join('\n---\n')}`);
      },
    );
    const front = await freePort();
    writeFileSync(
      join(dir, 'haproxy.cfg'),
      [
        'defaults',
        '  mode http',
        '  timeout connect 2s',
        '  timeout client 30s',
        // Above the service's own 30 s deadline: its 503 problem reaches the client, not an HTML 504.
        '  timeout server 35s',
        // A busy instance's slow health answer is not a dead instance (the check's own default
        // timeout is its interval, 1 s: a loaded machine took all three out at once).
        '  timeout check 5s',
        '  retries 2',
        '  option redispatch',
        '  retry-on conn-failure empty-response',
        'frontend api',
        `  bind 127.0.0.1:${front}`,
        '  default_backend shipyard',
        'backend shipyard',
        '  balance roundrobin',
        '  option httpchk GET /healthz',
        ...ports.map((p, i) => `  server s${i} 127.0.0.1:${p} check inter 1s fall 2 rise 2`),
        '',
      ].join('\n'),
    );
    start(haproxy!, ['-f', join(dir, 'haproxy.cfg'), '-db']);
    site = `http://127.0.0.1:${front}`;
    await waitFor(async () => ((await fetch(`${site}/healthz`).catch(() => undefined))?.ok ? true : undefined));
    db = await openDatabase({ databaseUrl: direct, dataDir: '', migrate: false });
  }, 240_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await db?.close();
    await receiver?.close();
    await bouncer?.stop();
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('all three came up from an empty database, one of them applying the migrations', () => {
    expect(logs.filter((l) => l.includes('migrations applied'))).toHaveLength(1);
    for (const log of logs) expect(log).toContain('hot statements go unnamed');
  });

  it('shares one key budget, keeps positions 1..N under concurrent writes, and delivers each event once, with no 5xx', async () => {
    const owner = await key(['projects.read', 'projects.write']);
    const project = await json(await call(site, owner, '/projects', { method: 'POST', body: '{"name":"Spread"}' }));
    const hook = await call(site, owner, `/projects/${project.id}/webhooks`, {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url, events: ['milestone.created'] }),
    });
    expect(hook.status).toBe(201);
    // 30 creates at once, spread over the three instances by the balancer.
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(site, owner, `/projects/${project.id}/milestones`, {
          method: 'POST',
          body: JSON.stringify({ title: `M${i}` }),
        }),
      ),
    );
    expect(made.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
    const roadmap = await json(await call(site, owner, `/projects/${project.id}/milestones?limit=100`));
    expect(roadmap.items.map((m: { position: number }) => m.position)).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    // Each event once, whichever instance's worker took it.
    await waitFor(async () => (receiver.received.length >= 30 ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 2000));
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);

    // A fresh key's budget, spent through the balancer: one budget, not one per instance.
    const reader = await key(['content.read']);
    const statuses: number[] = [];
    for (let round = 0; round < 5; round++)
      statuses.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, () => call(site, reader, '/platform/versions').then((r) => r.status)),
        )),
      );
    expect(statuses.filter((s) => s === 200)).toHaveLength(BUDGET);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  }, 120_000);

  it('a key revoked by the CLI through the pooler is refused by all three within a second', async () => {
    const token = await key(['content.read']);
    // Used on each instance, so that each has it cached.
    for (const base of instances)
      for (let i = 0; i < 3; i++) expect((await call(base, token, '/platform/versions')).status).toBe(200);
    const { id } = await db.orm.em.fork().findOneOrFail(ApiKey, { tokenHash: hashToken(token) });
    const revoked = spawnSync('bin/shipyard', ['keys', 'revoke', '--id', id], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect(revoked.status, revoked.stdout + revoked.stderr).toBe(0);
    const at = Date.now();
    for (const base of instances) {
      let status = 200;
      while (status !== 401 && Date.now() - at < 1000) status = (await call(base, token, '/platform/versions')).status;
      expect(status, base).toBe(401);
    }
    expect(Date.now() - at).toBeLessThan(1000);
  }, 60_000);
});
