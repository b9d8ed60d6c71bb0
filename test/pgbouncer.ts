/**
 * A throwaway PgBouncer (Debian's, 1.18 here) in front of a test PostgreSQL, in transaction mode
 * unless told otherwise: the pooler operators put in front of several instances. It refuses to
 * run as root, so as root it runs as the postgres user. `pgbouncerAvailable` is false where the
 * binary is missing; the tests that need one are skipped there (.ci/run installs it).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './harness.js';

const binary = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', 'pgbouncer'].find(
  (b) => spawnSync(b, ['--version']).status === 0,
);
export const pgbouncerAvailable = binary !== undefined;
if (!pgbouncerAvailable) {
  if (process.env.REQUIRE_SCALE_OUT === '1') throw new Error('REQUIRE_SCALE_OUT=1 but pgbouncer is not installed');
  console.warn('pgbouncer is not installed (apt-get install pgbouncer): the tests behind it are skipped');
}
export type Pgbouncer = { port: number; url: (database: string) => string; stop: () => Promise<void> };

export async function startPgbouncer(
  target: string,
  opts: { poolMode?: 'transaction' | 'session'; maxPreparedStatements?: number; poolSize?: number } = {},
): Promise<Pgbouncer> {
  const to = new URL(target);
  const dir = mkdtempSync(join(tmpdir(), 'shipyard-pgb-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${to.hostname} port=${to.port || 5432} user=${decodeURIComponent(to.username) || 'postgres'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'auth_type = any',
      `pool_mode = ${opts.poolMode ?? 'transaction'}`,
      `default_pool_size = ${opts.poolSize ?? 20}`,
      'max_client_conn = 500',
      'unix_socket_dir =',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      ...(opts.maxPreparedStatements !== undefined ? [`max_prepared_statements = ${opts.maxPreparedStatements}`] : []),
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  const ids = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
      }
    : {};
  const child: ChildProcess = spawn(binary!, [join(dir, 'pgbouncer.ini')], { ...ids, stdio: 'ignore' });
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  for (let i = 0; ; i++) {
    const probe = new pg.Client({
      connectionString: url(to.pathname.slice(1) || 'postgres'),
      connectionTimeoutMillis: 500,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.end();
      break;
    } catch {
      await probe.end().catch(() => undefined);
      if (i > 50 || child.exitCode !== null) throw new Error('pgbouncer did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
