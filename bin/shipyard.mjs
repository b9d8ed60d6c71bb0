#!/usr/bin/env node
// The operator CLI's launcher: `bin/shipyard …` (or `npx shipyard …`) runs it on the project's
// pinned Node 24.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`shipyard: needs Node 24 or newer (this is ${process.version}); run it as \`bin/shipyard …\` from the project directory.\n`);
  process.exit(1);
}
const node = process.execPath;
const projectFile = (relative) => fileURLToPath(new URL(relative, import.meta.url));
const args = process.argv.slice(2);

/** Ends this launcher as its child ended: with its exit code, or killed by the same signal. */
function endAs(code, signal) {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
}

// `serve` (also `npm start`, so `make run`): the server, dist/src/main.js, with its node options
// (bin/server-options.mjs), in a child that gets the signals this launcher gets, so a shutdown is
// still graceful. Node options given to the launcher come last and win.
if (args.length === 1 && args[0] === 'serve') {
  const [{ ensureBuilt }, { serverNodeOptions }] = await Promise.all([import('./build.mjs'), import('./server-options.mjs')]);
  await ensureBuilt();
  const server = spawn(node, [...serverNodeOptions(), ...process.execArgv, projectFile('../dist/src/main.js')], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => server.kill(signal));
  server.on('error', (err) => {
    process.stderr.write(`shipyard: the server did not start: ${err.message}\n`);
    process.exit(1);
  });
  server.on('exit', endAs);
} else if (!process.execArgv.includes('--single-threaded')) {
  // Node 24 can deadlock while exiting: a V8 compile job on a background thread waits for a
  // garbage collection that the exiting main thread never runs (nodejs/node#54918, #64274). Seen
  // in this project's CI: the CLI had answered and never exited. A command runs for a moment, so
  // it runs with V8 single-threaded (no background job, so nothing to wait for), in a child whose
  // exit code this launcher answers with; a signal that ends it ends the launcher the same way.
  // The embedded database's WebAssembly is compiled by the baseline compiler only (V8 lists
  // --liftoff-only among its testing flags; a command runs for a moment and needs no faster
  // code): otherwise the optimising compiler recompiles hot functions on V8's worker threads, and
  // the exit waits for that work though the command is done (docs/performance.md).
  const flags = ['--single-threaded', '--liftoff-only'];
  const cli = spawnSync(node, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
  if (cli.error) throw cli.error;
  endAs(cli.status, cli.signal);
} else {
  // The CLI, bundled (dist/cli/), built first when a source changed (bin/build.mjs). V8 keeps what
  // it compiled of each file in Node's compile cache, so the next command does not parse the ORM
  // and its drivers again. It lives in the project (not the shared temporary directory, where
  // another account could plant code for V8 to load).
  const [{ ensureBuilt }, { enableCompileCache }] = await Promise.all([import('./build.mjs'), import('node:module')]);
  enableCompileCache(projectFile('../node_modules/.cache/node-compile-cache'));
  await ensureBuilt();
  await import('../dist/cli/main.js');
}
