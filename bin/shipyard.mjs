#!/usr/bin/env node
// The operator CLI. `npx shipyard …` runs it on the project's pinned Node 24.
import { fileURLToPath } from 'node:url';
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`shipyard: needs Node 24 or newer (this is ${process.version}); run it as \`npx shipyard …\` from the project directory.\n`);
  process.exit(1);
}
// Node 24 can deadlock while exiting: a V8 compile job on a background thread waits for a
// garbage collection that the exiting main thread never runs (nodejs/node#54918, #64274). Seen
// in this project's CI: the CLI had answered and never exited. A command runs for a moment, so it
// runs with V8 single-threaded (no background job, so nothing to wait for): this launcher starts
// it so, and answers with its exit code; a signal that ends it ends the launcher the same way.
// Not `serve`: the server needs V8's background threads (garbage collection, compilation).
// The embedded database's WebAssembly is compiled by the baseline compiler only (V8 lists
// --liftoff-only among its testing flags; a command runs for a moment and needs no faster code):
// otherwise the optimising compiler recompiles hot functions on V8's worker threads, and the
// exit waits for that work though the command is done (docs/performance.md).
if (process.argv[2] !== 'serve' && !process.execArgv.includes('--single-threaded')) {
  const { spawnSync } = await import('node:child_process');
  const flags = ['--single-threaded', '--liftoff-only'];
  const cli = spawnSync(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (cli.error) throw cli.error;
  if (cli.signal) process.kill(process.pid, cli.signal);
  process.exit(cli.status ?? 1);
}
// `serve` runs with the node options `make run` gives the server (package.json's start script: the
// heap cap, HEAP_MB, 512 by default, and no allocation-site pretenuring: docs/operations.md), in a
// child that gets the signals the launcher gets, so a shutdown is still graceful.
if (process.argv[2] === 'serve' && !process.execArgv.some((a) => a.startsWith('--max-old-space-size'))) {
  const { spawn } = await import('node:child_process');
  const heap = `--max-old-space-size=${process.env.HEAP_MB || 512}`;
  const options = [heap, '--enable-source-maps', '--no-allocation-site-pretenuring'];
  const server = spawn(process.execPath, [...options, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
  server.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 143)));
  await new Promise(() => {}); // the launcher waits for the server's exit
}
// The CLI runs as JavaScript from dist/, built first when a source changed (bin/build.mjs).
// V8 keeps what it compiled of each module in Node's compile cache, so the next command does not
// parse the ORM and its drivers again. It lives in the project (not the shared temporary
// directory, where another account could plant code for V8 to load).
const { enableCompileCache } = await import('node:module');
enableCompileCache(fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url)));
const { ensureBuilt } = await import('./build.mjs');
await ensureBuilt();
await import('../dist/src/cli/main.js');
