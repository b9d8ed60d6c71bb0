#!/usr/bin/env node
// The operator CLI's launcher: `bin/shipyard …` (or `npx shipyard …`) runs it on the project's
// pinned Node 24.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 2)) {
  process.stderr.write(`shipyard: needs Node 24.2 or newer (this is ${process.version}); run it as \`bin/shipyard …\` from the project directory.\n`);
  process.exit(1);
}
const node = process.execPath;
const projectFile = (relative) => fileURLToPath(new URL(relative, import.meta.url));
const args = process.argv.slice(2);

/**
 * Runs node with these arguments in a child that gets the signals this launcher gets (a shutdown
 * stays graceful; a command is not left running on its own), and ends as the child ended. A child
 * ended by a signal gives the shell's code for it (128 + its number) rather than the signal
 * itself: re-raised, SIGABRT would dump a second core, and a launcher that is PID 1 (a container)
 * would ignore it. With `channel`, the child also has an IPC channel to this launcher, which
 * closes when the launcher ends, even killed by SIGKILL (which nothing can pass on): the server
 * stops when it closes.
 */
function runChild(nodeArgs, { channel = false } = {}) {
  const child = spawn(node, nodeArgs, { stdio: channel ? ['inherit', 'inherit', 'inherit', 'ipc'] : 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(`shipyard: could not start node: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}

/**
 * Before the slow work (a build, the database, migrations): a port someone else holds is said at
 * once, with how to choose another, instead of as a raw EADDRINUSE a minute later.
 */
async function portFree() {
  const { createServer } = await import('node:net');
  const port = Number(process.env.PORT || 3000);
  const host = process.env.HOST || '0.0.0.0';
  if (!Number.isInteger(port) || port < 0 || port > 65535) return; // the server's own check says why
  await new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err) => {
      if (err.code !== 'EADDRINUSE') return resolve();
      process.stderr.write(
        `shipyard: port ${port} is in use (another server?): choose another, e.g. PORT=${port + 1} make run` +
          ' (a second Shipyard on the embedded database also needs a DATA_DIR of its own)\n',
      );
      process.exit(1);
    });
    probe.listen(port, host, () => probe.close(resolve));
  });
}

if (args.length === 1 && args[0] === 'serve') {
  // `serve` (also `npm start`, so `make run`): the server, dist/src/main.js, with its node options
  // (bin/server-options.mjs); node options given to the launcher come last and win.
  const [{ ensureBuilt }, { serverNodeOptions }] = await Promise.all([import('./build.mjs'), import('./server-options.mjs')]);
  await portFree();
  await ensureBuilt(() => process.stderr.write('shipyard: building the server (a first start, or the source changed)…\n'));
  // It stops when this launcher ends, however it ends: it holds a channel to it (src/main.ts).
  runChild([...serverNodeOptions(), ...process.execArgv, projectFile('../dist/src/main.js'), '--launcher-channel'], { channel: true });
} else if (args.length === 1 && args[0] === 'worker') {
  // `worker`: the webhook worker alone (src/worker.ts), a long-running process like the server.
  const [{ ensureBuilt }, { serverNodeOptions }] = await Promise.all([import('./build.mjs'), import('./server-options.mjs')]);
  await ensureBuilt(() => process.stderr.write('shipyard: building (a first start, or the source changed)…\n'));
  runChild([...serverNodeOptions(), ...process.execArgv, projectFile('../dist/src/worker.js')]);
} else if (!process.execArgv.includes('--single-threaded')) {
  // Node 24 can deadlock while exiting: a V8 compile job on a background thread waits for a
  // garbage collection that the exiting main thread never runs (nodejs/node#54918, #64274). Seen
  // in this project's CI: the CLI had answered and never exited. A command runs for a moment, so
  // it runs with V8 single-threaded (no background job, so nothing to wait for), in a child.
  // The embedded database's WebAssembly is compiled by the baseline compiler only (V8 lists
  // --liftoff-only among its testing flags; a command runs for a moment and needs no faster
  // code): otherwise the optimising compiler recompiles hot functions on V8's worker threads, and
  // the exit waits for that work though the command is done (docs/performance.md).
  runChild(['--single-threaded', '--liftoff-only', ...process.execArgv, fileURLToPath(import.meta.url), ...args]);
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
