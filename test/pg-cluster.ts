/**
 * A throwaway PostgreSQL cluster for fault tests (initdb on a free port, fsync off): stopped,
 * started and frozen at will, never a shared one. `clusterAvailable` is false where PostgreSQL's
 * server binaries are not installed; the tests that need one are skipped there.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './harness.js';

const pgBin = existsSync('/usr/lib/postgresql')
  ? readdirSync('/usr/lib/postgresql')
      .sort()
      .map((v) => `/usr/lib/postgresql/${v}/bin`)
      .at(-1)
  : undefined;
const asRoot = process.getuid?.() === 0;
export const clusterAvailable = Boolean(
  pgBin && existsSync(`${pgBin}/initdb`) && (!asRoot || existsSync('/usr/sbin/runuser')),
);

function run(cmd: string, args: string[]) {
  // initdb and postgres refuse to run as root: run them as the postgres user then.
  if (asRoot) execFileSync('/usr/sbin/runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' });
  else execFileSync(cmd, args, { stdio: 'pipe' });
}

export type Cluster = {
  url: string;
  port: number;
  start: () => void;
  /** An immediate shutdown: connections drop at once. */
  stop: () => void;
  /** Every process of the cluster stopped with SIGSTOP: connections hang, nothing answers. */
  freeze: () => void;
  thaw: () => void;
  destroy: () => void;
};

/**
 * A cluster: initdb'd, or (`replicaOf`) a streaming replica of another, made with
 * `pg_basebackup -R` as an operator makes one.
 */
export async function startCluster(opts: { replicaOf?: Cluster } = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'shipyard-pg-'));
  chmodSync(dir, 0o777);
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const port = await freePort();
  if (opts.replicaOf)
    run(`${pgBin}/pg_basebackup`, [
      '-D',
      `${dir}/data`,
      '-R',
      '-X',
      'stream',
      '-h',
      '127.0.0.1',
      '-p',
      String(opts.replicaOf.port),
      '-U',
      'postgres',
    ]);
  else run(`${pgBin}/initdb`, ['-D', `${dir}/data`, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const start = () =>
    run(`${pgBin}/pg_ctl`, [
      '-D',
      `${dir}/data`,
      '-w',
      '-l',
      `${dir}/log`,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  const stop = () => run(`${pgBin}/pg_ctl`, ['-D', `${dir}/data`, '-w', '-m', 'immediate', 'stop']);
  let frozen: string[] = [];
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    freeze: () => {
      const postmaster = readFileSync(`${dir}/data/postmaster.pid`, 'utf8').split('\n')[0]!;
      frozen = [postmaster, ...execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).split('\n')].filter(
        Boolean,
      );
      execFileSync('kill', ['-STOP', ...frozen]);
    },
    thaw: () => {
      if (frozen.length) execFileSync('kill', ['-CONT', ...frozen]);
      frozen = [];
    },
    destroy: () => {
      try {
        stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
