/**
 * Redis as operators run it for failover, through the client library's own support: a master
 * with a replica watched by three Sentinels (REDIS_SENTINELS), and a three-node Cluster
 * (REDIS_CLUSTER_NODES). Under two instances, one key's budget stays one budget: on Sentinel
 * before and after the master is killed and a replica takes over, and on the Cluster, where a
 * key's and its user's counters share a slot. Each test runs its own throwaway redis-server
 * processes on free ports; skipped where redis-server is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Beside, freePort, instanceBeside, startServer, type TestServer, userWithKey } from './harness.js';
import { createLogger } from '../src/http/log.js';
import { connectRedis, type RedisLink, type RedisSettings } from '../src/budgets/counters.js';

const available = spawnSync('redis-server', ['--version']).status === 0;
const BUDGET = 6;

const dir = mkdtempSync(join(tmpdir(), 'shipyard-redis-'));
const processes: ChildProcess[] = [];
const links: RedisLink[] = [];
const instances: Beside[] = [];
let t: TestServer;

const cli = (port: number, ...args: string[]) =>
  spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim();

/** A redis-server with these arguments, running once it answers PING. */
async function redis(port: number, args: string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [...args, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      cwd: dir,
      stdio: 'ignore',
    },
  );
  processes.push(child);
  for (let i = 0; i < 100; i++) {
    if (cli(port, 'ping') === 'PONG') {
      // Ours, not another process's that had the port already.
      if (!cli(port, 'info', 'server').includes(`process_id:${child.pid}`))
        throw new Error(`port ${port} answers for another redis-server`);
      return child;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server on ${port} did not start`);
}

/** An instance of the service with these Redis settings: its origin, once its client is connected. */
async function instance(settings: RedisSettings): Promise<string> {
  const link = connectRedis(settings, createLogger('silent'));
  links.push(link);
  const beside = await instanceBeside(t, { redis: link, config: { rateLimitPerMinute: BUDGET } });
  instances.push(beside);
  for (let i = 0; i < 100 && !link.isReady; i++) await new Promise((r) => setTimeout(r, 100));
  return beside.url;
}

/** The user of the last key `spend` used. */
let spender = '';
/** A fresh key's requests, alternating between the instances: their statuses. */
async function spend(urls: string[], count: number): Promise<number[]> {
  const { token, user } = await userWithKey(t, ['content.read']);
  spender = user.id;
  const statuses: number[] = [];
  for (let i = 0; i < count; i++)
    statuses.push(
      (
        await fetch(`${urls[i % urls.length]}/api/v1/platform/versions`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(5000),
        })
      ).status,
    );
  return statuses;
}
const oneBudget = [...Array(BUDGET).fill(200), 429, 429];

const mode = async (url: string) =>
  ((await (await fetch(`${url}/readyz`)).json()) as { rateLimits: string }).rateLimits;

describe.skipIf(!available)('Redis with failover, under two instances', () => {
  beforeAll(async () => {
    t = await startServer();
  }, 60_000);
  afterAll(async () => {
    for (const i of instances) await i.close();
    for (const l of links) l.close();
    for (const p of processes) p.kill('SIGKILL');
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Sentinel: one budget across instances, before and after the master dies and its replica takes over', async () => {
    const [master, replica] = [await freePort(), await freePort()];
    const killMaster = await redis(master, []);
    await redis(replica, ['--replicaof', '127.0.0.1', String(master)]);
    const sentinels: number[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `sentinel monitor mymaster 127.0.0.1 ${master} 2`,
          'sentinel down-after-milliseconds mymaster 1000',
          'sentinel failover-timeout mymaster 5000',
          '',
        ].join('\n'),
      );
      await redis(port, [conf, '--sentinel']);
      sentinels.push(port);
    }
    const settings: RedisSettings = {
      sentinels: sentinels.map((port) => ({ host: '127.0.0.1', port })),
      master: 'mymaster',
    };
    const urls = [await instance(settings), await instance(settings)];
    expect(await spend(urls, BUDGET + 2)).toEqual(oneBudget);

    killMaster.kill('SIGKILL');
    // The sentinels agree the master is down and promote the replica.
    for (let i = 0; i < 150; i++) {
      const answer = cli(sentinels[0]!, 'sentinel', 'get-master-addr-by-name', 'mymaster');
      if (answer.includes(String(replica))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(cli(sentinels[0]!, 'sentinel', 'get-master-addr-by-name', 'mymaster')).toContain(String(replica));
    // Each instance follows the failover by itself and shares the budgets again.
    for (const url of urls) {
      let now = '';
      for (let i = 0; i < 100 && now !== 'shared'; i++) {
        now = await mode(url);
        if (now !== 'shared') await new Promise((r) => setTimeout(r, 200));
      }
      expect(now, url).toBe('shared');
    }
    expect(await spend(urls, BUDGET + 2)).toEqual(oneBudget);
  }, 120_000);

  it('Cluster: one budget across instances, a key and its user counted in one slot', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports)
      await redis(port, ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)]);
    const made = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    );
    expect(made.status, made.stdout + made.stderr).toBe(0);
    for (let i = 0; i < 100 && !cli(ports[0]!, 'cluster', 'info').includes('cluster_state:ok'); i++)
      await new Promise((r) => setTimeout(r, 100));
    const settings: RedisSettings = { cluster: ports.map((port) => ({ host: '127.0.0.1', port })) };
    const urls = [await instance(settings), await instance(settings)];
    for (const url of urls) expect(await mode(url)).toBe('shared');
    expect(await spend(urls, BUDGET + 2)).toEqual(oneBudget);
    // Spent in Redis, not by each instance on its own (a script over two slots would have failed).
    for (const url of urls) expect(await mode(url)).toBe('shared');
    // The key's counter and its user's are on one node: one script spent from both.
    const holding = ports.filter((port) => cli(port, 'keys', `*${spender}*`).split('\n').filter(Boolean).length === 2);
    expect(holding).toHaveLength(1);
  }, 120_000);
});
