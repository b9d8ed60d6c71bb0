/**
 * A throwaway PgBouncer in front of a test PostgreSQL, in transaction mode unless told otherwise:
 * the pooler operators put in front of several instances. Two generations matter: before 1.21
 * (Debian 12's 1.18) a transaction pooler drops statement names; from 1.21 it keeps them when
 * `max_prepared_statements` is set (1.24 sets it by default). Each test says which it wants:
 * `keepsNames: false` gets the old behaviour from either (0 on a current one), `true` needs a
 * current binary: Debian's, or the one .ci/pgbouncer-current.sh builds into the user's cache.
 * PgBouncer refuses to run as root, so as root it runs as the postgres user (a binary in root's
 * cache from a copy in its own folder). The tests that need a missing one are skipped (.ci/run provides both).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './harness.js';

/** The first release whose transaction pooling keeps protocol-level prepared statements. */
const KEEPS_NAMES_FROM = [1, 21];

function versionOf(binary: string): number[] | undefined {
  const run = spawnSync(binary, ['--version']);
  const found = run.status === 0 ? /PgBouncer (\d+)\.(\d+)/.exec(run.stdout.toString()) : null;
  return found ? [Number(found[1]), Number(found[2])] : undefined;
}
const atLeast = (v: number[], min: number[]) => v[0]! > min[0]! || (v[0] === min[0] && v[1]! >= min[1]!);

const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'shipyard');
const built = (() => {
  try {
    return readdirSync(cache)
      .filter((d) => d.startsWith('pgbouncer-'))
      .map((d) => join(cache, d, 'pgbouncer'));
  } catch {
    return [];
  }
})();
const binaries = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', 'pgbouncer', ...built]
  .map((path) => ({ path, version: versionOf(path) }))
  .filter((b): b is { path: string; version: number[] } => b.version !== undefined);
const older = binaries.find((b) => !atLeast(b.version, KEEPS_NAMES_FROM));
const current = binaries.find((b) => atLeast(b.version, KEEPS_NAMES_FROM));

export const pgbouncerAvailable = binaries.length > 0;
/** A PgBouncer 1.21+ is here: the tests of a pooler that keeps statement names can run. */
export const pgbouncerKeepingNamesAvailable = current !== undefined;
// A current one serves both kinds of test (the old behaviour with the setting at 0).
if (process.env.REQUIRE_SCALE_OUT === '1' && !current)
  throw new Error('REQUIRE_SCALE_OUT=1 but there is no PgBouncer 1.21+ (.ci/pgbouncer-current.sh builds one)');
if (!pgbouncerAvailable)
  console.warn('pgbouncer is not installed (apt-get install pgbouncer): the tests behind it are skipped');
else if (!current) console.warn('no PgBouncer 1.21+ (.ci/pgbouncer-current.sh builds one): its tests are skipped');

export type Pgbouncer = {
  port: number;
  /** The release running, as `1.24`. */
  version: string;
  url: (database: string) => string;
  /** Sends one statement to PgBouncer's admin console (`SHOW SERVERS`, say): its rows. */
  admin: (statement: string) => Promise<Record<string, unknown>[]>;
  stop: () => Promise<void>;
};

export async function startPgbouncer(
  target: string,
  opts: { poolMode?: 'transaction' | 'session'; keepsNames?: boolean; poolSize?: number } = {},
): Promise<Pgbouncer> {
  // The old generation's behaviour comes from an old binary where there is one, else from a
  // current one with the setting at 0.
  const chosen = opts.keepsNames ? current : (older ?? current);
  if (!chosen) throw new Error(`no PgBouncer ${opts.keepsNames ? '1.21+' : ''} here`);
  // 1.24 keeps names by default (200): a test of a current pooler runs it on its defaults.
  const maxPrepared = !atLeast(chosen.version, KEEPS_NAMES_FROM)
    ? undefined
    : !opts.keepsNames
      ? 0
      : atLeast(chosen.version, [1, 24])
        ? undefined
        : 200;
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
      'admin_users = postgres',
      `pool_mode = ${opts.poolMode ?? 'transaction'}`,
      `default_pool_size = ${opts.poolSize ?? 20}`,
      'max_client_conn = 500',
      'unix_socket_dir =',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      ...(maxPrepared !== undefined ? [`max_prepared_statements = ${maxPrepared}`] : []),
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  // A binary in root's cache is out of the postgres user's reach: it runs from this folder.
  const copied = asRoot && chosen.path.startsWith(cache);
  const binary = copied ? join(dir, 'pgbouncer') : chosen.path;
  if (copied) {
    copyFileSync(chosen.path, binary);
    chmodSync(binary, 0o755);
  }
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  const ids = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
      }
    : {};
  const child: ChildProcess = spawn(binary, [join(dir, 'pgbouncer.ini')], { ...ids, stdio: 'ignore' });
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
    version: chosen.version.join('.'),
    url,
    admin: async (statement) => {
      const console = new pg.Client({ connectionString: url('pgbouncer') });
      await console.connect();
      try {
        return (await console.query(statement)).rows;
      } finally {
        await console.end();
      }
    },
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
