/**
 * Behind PgBouncer in transaction mode, as operators run it in front of several instances, on a
 * throwaway PostgreSQL cluster. Before 1.21 (Debian 12's 1.18) it drops statement names: with
 * default settings the service finds that out at start and sends them unnamed, so no request
 * fails for it; forced to name them, /readyz says the path is broken. From 1.21, with
 * `max_prepared_statements`, it keeps them: the service finds that too and names them. The
 * operator CLI honours the same settings through the pooler, and instances started together on
 * an empty database wait for one another's migrations. Skipped where pgbouncer or PostgreSQL's
 * server binaries are missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { freePort, startServer, type TestServer, uniqueName, userWithKey } from './harness.js';
import { type Cluster, clusterAvailable, startCluster } from './pg-cluster.js';
import { type Pgbouncer, pgbouncerAvailable, pgbouncerKeepingNamesAvailable, startPgbouncer } from './pgbouncer.js';
import { probeStatementPath } from '../src/db/poolers.js';
import { namesRefusedOnThePath, namingClient, statementNamesFailedWithin } from '../src/db/named-statements.js';
import { createUser } from '../src/users/users.service.js';
import { createKey } from '../src/keys/keys.service.js';

let cluster: Cluster;
let bouncer: Pgbouncer;
/** A database of the cluster, reached straight and through the pooler. */
let direct = '';
let pooled = '';

async function createDatabase(name: string) {
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
}

describe.skipIf(!clusterAvailable || !pgbouncerAvailable)('behind PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    cluster = await startCluster();
    bouncer = await startPgbouncer(cluster.url);
    await createDatabase('shipyard');
    direct = cluster.url.replace(/\/postgres$/, '/shipyard');
    pooled = bouncer.url('shipyard');
  }, 120_000);
  afterAll(async () => {
    await bouncer?.stop();
    cluster?.destroy();
  });

  it('tells a transaction pooler from a direct connection, and whether names pass it', async () => {
    expect(await probeStatementPath(direct)).toMatchObject({ named: true });
    expect((await probeStatementPath(direct)).transactionPooler).toBeFalsy();
    expect(await probeStatementPath(pooled)).toMatchObject({ named: false, transactionPooler: true });
  });

  it('counts a path the start saw drop names as failing for good, whatever failed since', async () => {
    const Client = namingClient();
    namesRefusedOnThePath(Client);
    const c = new Client({ connectionString: direct });
    await c.connect();
    try {
      // A name taken on the session: the named statement after it fails for its name (42P05).
      await c.query('prepare shipyard_refused as select 1');
      await expect(c.query({ name: 'shipyard_refused', text: 'select 1' })).rejects.toMatchObject({ code: '42P05' });
      await new Promise((r) => setTimeout(r, 20));
      // Long after that failure by the window's measure: still failing, as the start found.
      expect(statementNamesFailedWithin(Client, 1)).toBe(true);
      const fresh = namingClient();
      expect(statementNamesFailedWithin(fresh, 1)).toBe(false);
    } finally {
      await c.end();
    }
  });

  describe('a server on default settings, and one told to name its statements', () => {
    let auto: TestServer;
    let forced: TestServer;
    beforeAll(async () => {
      auto = await startServer({ databaseUrl: pooled, directUrl: direct });
      forced = await startServer({ databaseUrl: pooled, directUrl: direct, preparedStatements: true });
    }, 120_000);
    afterAll(async () => {
      await auto?.close();
      await forced?.close();
    });

    it('answers every request on default settings: its statements go unnamed, and /readyz says ready', async () => {
      expect(auto.db.statements).toMatchObject({ named: false, transactionPooler: true });
      const statuses = await load(auto);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses).toHaveLength(120);
      const ready = await fetch(`${auto.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', database: 'ok' });
    }, 60_000);

    it('forced to name them (DATABASE_PREPARED_STATEMENTS=true), /readyz says the path cannot run them', async () => {
      // Said from the start, before any request failed: the start's probe found the pooler drops names.
      expect(forced.db.statements).toMatchObject({
        named: true,
        transactionPooler: true,
        refused: expect.stringContaining('transaction pooler'),
      });
      const before = await fetch(`${forced.baseUrl}/readyz`);
      expect(before.status).toBe(503);
      expect(await before.json()).toMatchObject({ status: 'unavailable', database: 'statements-fail' });
      const statuses = await load(forced).catch(() => [500]);
      // The pooler hands each transaction a server connection that may not know the name.
      expect(statuses.some((s) => s >= 500)).toBe(true);
      const ready = await fetch(`${forced.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', database: 'statements-fail' });
    }, 60_000);
  });

  it('the operator CLI revokes a key through the pooler, every time', async () => {
    const t = await startServer({ databaseUrl: pooled, directUrl: direct });
    try {
      for (let i = 0; i < 4; i++) {
        await revokesThroughCli(t, pooled);
      }
    } finally {
      await t.close();
    }
  }, 120_000);

  it('three instances started at once on an empty database all come up: one migrates, the others wait', async () => {
    await createDatabase('fresh');
    const env = { DATABASE_URL: bouncer.url('fresh'), DATABASE_DIRECT_URL: direct.replace(/\/shipyard$/, '/fresh') };
    const ports = [await freePort(), await freePort(), await freePort()];
    const servers = ports.map((port) => serve(port, env));
    try {
      const logs = await Promise.all(servers.map((s) => s.listening));
      for (const log of logs) expect(log).toContain('shipyard listening');
      const migrated = logs.filter((log) => log.includes('migrations applied'));
      expect(migrated).toHaveLength(1);
      for (const port of ports) expect(await readyWithin(port)).toMatchObject({ status: 200 });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, 180_000);

  it('MIGRATE_ON_START=false: an instance finds migrations pending and stops saying so; `bin/shipyard migrate` applies them', async () => {
    await createDatabase('deployed');
    const env = {
      DATABASE_URL: bouncer.url('deployed'),
      DATABASE_DIRECT_URL: direct.replace(/\/shipyard$/, '/deployed'),
      MIGRATE_ON_START: 'false',
    };
    const early = serve(await freePort(), env);
    try {
      const log = await early.listening;
      expect(log).toMatch(
        /database migration\(s\) are pending .* and MIGRATE_ON_START is false: run `bin\/shipyard migrate` first/,
      );
      expect(log).not.toContain('shipyard listening');
    } finally {
      await early.stop();
    }
    const migrated = await cli(['migrate'], env);
    expect(migrated.code, migrated.output).toBe(0);
    const port = await freePort();
    const late = serve(port, env);
    try {
      expect(await late.listening).toContain('shipyard listening');
      expect(await readyWithin(port)).toMatchObject({ status: 200 });
    } finally {
      await late.stop();
    }
  }, 180_000);

  describe.skipIf(!pgbouncerKeepingNamesAvailable)('PgBouncer 1.21+, which keeps statement names', () => {
    let keeper: Pgbouncer;
    let servers: TestServer[] = [];
    beforeAll(async () => {
      keeper = await startPgbouncer(cluster.url, { keepsNames: true });
      const through = keeper.url('shipyard');
      // Two instances naming the same statements on the same server connections.
      servers = [
        await startServer({ databaseUrl: through, directUrl: direct }),
        await startServer({ databaseUrl: through, directUrl: direct }),
      ];
    }, 120_000);
    afterAll(async () => {
      await Promise.all(servers.map((t) => t.close()));
      await keeper?.stop();
    });

    it('is found to keep them, so the service names its statements on default settings', async () => {
      expect(await probeStatementPath(keeper.url('shipyard'))).toMatchObject({ named: true, transactionPooler: true });
      for (const t of servers) expect(t.db.statements).toMatchObject({ named: true, transactionPooler: true });
    });

    it('answers every request of two instances at once, the pooler re-preparing their statements as it moves them', async () => {
      const [a, b] = await Promise.all(servers.map((t) => load(t)));
      expect([...a!, ...b!].filter((s) => s >= 500)).toEqual([]);
      expect([...a!, ...b!]).toHaveLength(240);
      for (const t of servers) {
        const ready = await fetch(`${t.baseUrl}/readyz`);
        expect(await ready.json()).toMatchObject({ status: 'ready', database: 'ok' });
      }
      // The pooler's own count of what it prepared on PostgreSQL's connections for us.
      const prepared = (await keeper.admin('show servers')).reduce(
        (n, server) => n + Number(server.prepared_statements ?? 0),
        0,
      );
      expect(prepared).toBeGreaterThan(0);
    }, 120_000);

    it('the operator CLI revokes a key through it', async () => {
      await revokesThroughCli(servers[0]!, keeper.url('shipyard'));
    }, 60_000);
  });
});

/** Reads and writes, ten at a time, on one owner's project: the statuses seen. */
async function load(t: TestServer): Promise<number[]> {
  const owner = await userWithKey(t);
  const { data: project } = await api.createProject({ client: owner.client, body: { name: uniqueName('Pooled') } });
  const statuses: number[] = [];
  const one = async (i: number) => {
    const res =
      i % 3 === 0
        ? await api.createMilestone({
            client: owner.client,
            path: { projectId: project!.id },
            body: { title: `M${i}` },
          })
        : i % 3 === 1
          ? await api.getProject({ client: owner.client, path: { projectId: project!.id } })
          : await api.listMilestones({ client: owner.client, path: { projectId: project!.id } });
    statuses.push(res.response!.status);
  };
  for (let round = 0; round < 12; round++) await Promise.all(Array.from({ length: 10 }, (_, i) => one(round * 10 + i)));
  return statuses;
}

/**
 * /readyz of an instance that has just started listening, asked until it says ready or 30 s
 * have passed: the last answer. Readiness may lag listening on a loaded machine (its database
 * check waits two seconds at most), which is what a balancer's repeated probe allows for.
 */
async function readyWithin(port: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    const answer = { status: res.status, body: await res.text() };
    if (answer.status === 200 || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A new key of a new user, revoked by `bin/shipyard keys revoke` through `url`: the CLI exits 0 and the key is revoked. */
async function revokesThroughCli(t: TestServer, url: string): Promise<void> {
  const em = t.db.orm.em.fork();
  const name = uniqueName();
  const user = await createUser(em, { username: name, email: `${name}@example.test` });
  const { key } = await createKey(em, { userId: user.id, name: 'cli', scopes: ['projects.read'], expiresInDays: 1 });
  const run = await cli(['keys', 'revoke', '--id', key.id], { DATABASE_URL: url, DATABASE_DIRECT_URL: direct });
  expect(run.code, run.output).toBe(0);
  const stored = await t.db.orm.em.fork().execute('select revoked_at from api_keys where id = ?', [key.id]);
  expect(stored[0]!.revoked_at).not.toBeNull();
}

/** bin/shipyard with these settings added: its exit code and everything it wrote. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bin/shipyard', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** `bin/shipyard serve` on `port`: resolves with its log once it listens (or has ended). */
function serve(port: number, env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'shipyard-pooled-'));
  const child = spawn('bin/shipyard', ['serve'], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      GITHUB_SYNC_INTERVAL_MINUTES: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const listening = new Promise<string>((resolve) => {
    const check = setInterval(() => {
      if (log.includes('shipyard listening') || child.exitCode !== null) {
        clearInterval(check);
        resolve(log);
      }
    }, 100);
  });
  return {
    listening,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
