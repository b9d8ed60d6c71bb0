/**
 * make bench-cli: how long each operator command takes, as an operator runs it (`bin/shipyard
 * …`), on a fresh embedded database in a temporary DATA_DIR, or on DATABASE_URL when it is set.
 * Prints the median of five runs of each, `npx shipyard help` for comparison, and two floors.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED_SUBDIR } from '../src/db/database.js';
import { CLI_SHARED_BUFFERS } from '../src/cli/commands.js';

const dataDir = mkdtempSync(join(tmpdir(), 'shipyard-cli-bench-'));
const env = { ...process.env, DATA_DIR: dataDir };
const username = `bench${process.pid}`;

function timed(args: string[], input?: string, command = 'bin/shipyard'): number {
  const started = process.hrtime.bigint();
  execFileSync(command, args, { env, input, stdio: ['pipe', 'ignore', 'inherit'] });
  return Number(process.hrtime.bigint() - started) / 1e6;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const medianOf = (args: string[], input?: string, command?: string) =>
  median(Array.from({ length: 5 }, () => timed(args, input, command)));

execFileSync(process.execPath, ['bin/build.mjs'], { stdio: 'inherit' });
const rows: [string, number][] = [];
rows.push(['migrate (a new database)', timed(['migrate'])]);
rows.push(['users create', timed(['users', 'create', '--username', username, '--email', `${username}@example.test`])]);
const runs: [string, string[], string?][] = [
  ['help', ['help']],
  ['migrate (nothing to apply)', ['migrate']],
  ['users set-password', ['users', 'set-password', '--username', username], 'velvet quasar lantern 71 umbrella\n'],
  ['keys create', ['keys', 'create', '--username', username, '--scopes', 'projects.read', '--expires-in-days', '7']],
  ['keys list', ['keys', 'list', '--username', username]],
];
for (const [name, args, input] of runs) rows.push([name, medianOf(args, input)]);
// The same through npm, which first reads the whole node_modules tree.
rows.push(['npx shipyard help', medianOf(['shipyard', 'help'], undefined, 'npx')]);
// What no command can go below on this machine, to read the figures above by: a Node process that
// does nothing, and (embedded) PGlite opening the same database directory and closing, with the
// CLI's flags and buffer cache.
rows.push(['(node, doing nothing)', medianOf(['-e', ''], undefined, process.execPath)]);
if (!process.env.DATABASE_URL) {
  const pglite = `const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(${JSON.stringify(join(dataDir, EMBEDDED_SUBDIR))}, { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=${CLI_SHARED_BUFFERS}'] });
    await db.close();`;
  const flags = ['--single-threaded', '--liftoff-only', '--input-type=module', '-e', pglite];
  rows.push(['(PGlite start and close)', medianOf(flags, undefined, process.execPath)]);
}

console.log(
  `CLI on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'the embedded database'} (median of 5; first two: one run)`,
);
for (const [name, ms] of rows) console.log(`  ${name.padEnd(28)} ${(ms / 1000).toFixed(2)} s`);
rmSync(dataDir, { recursive: true, force: true });
