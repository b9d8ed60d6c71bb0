/**
 * SIGTERM, as an operator or an orchestrator sends it to the real server process: it stops
 * accepting connections, finishes the request in flight, closes the database and exits 0.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ownProcessEnv } from './harness.js';

/**
 * How long a server may take to start from nothing (the build, then every migration on a new
 * embedded database) on a machine running another test file beside this one; and each test's.
 */
const STARTING_MS = 120_000;
const TEST_MS = STARTING_MS + 60_000;

/** Waits until `done()`, polling every quarter second, for at most `ms`; whether it came. */
async function until(done: () => boolean, ms = STARTING_MS): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  return done();
}

/**
 * An embedded database with every migration applied, kept from the first test's server once it
 * stopped cleanly: a later test starts from a copy, not from nothing (the migrations on a new
 * embedded database are most of a start). Until then, or if that test failed, each starts empty.
 */
let migrated: string | undefined;
afterAll(() => {
  if (migrated) rmSync(migrated, { recursive: true, force: true });
});

/**
 * A free port, a data directory (empty, or with `copy` a copy of the migrated one when there is
 * one) and the environment of a server with its own embedded database.
 */
async function ownServer(
  prefix: string,
  copy = false,
): Promise<{ dataDir: string; port: number; env: NodeJS.ProcessEnv }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  if (copy && migrated) cpSync(migrated, dataDir, { recursive: true });
  const port = await freePort();
  const env = ownProcessEnv(port, dataDir);
  delete env.DATABASE_URL; // its own embedded database
  return { dataDir, port, env };
}

describe('graceful shutdown', () => {
  it(
    'finishes the in-flight request, closes the database and exits 0 on SIGTERM',
    async () => {
      const { dataDir, port, env } = await ownServer('shipyard-term-');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      child.stderr.on('data', (d) => (log += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        await until(() => log.includes('shipyard listening'));
        expect(log).toContain('shipyard listening');
        // A first start says how far its migrations are: the first and the last at least.
        const of = log.match(/"msg":"migrating 1 of (\d+)"/)?.[1];
        expect(Number(of)).toBeGreaterThan(1);
        expect(log).toContain(`"msg":"migrating ${of} of ${of}"`);

        // A request whose body is still on its way (a sign-in form: the web pages read the body
        // first; the API answers a request without a key before reading its body).
        const socket = connect(port, '127.0.0.1');
        await new Promise<void>((r) => socket.once('connect', () => r()));
        let response = '';
        socket.on('data', (d) => (response += d));
        const body = 'login=nobody&password=in+flight';
        socket.write(
          `POST /signin HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
        );
        // Time for the server to read the request's head (then it is in flight, not an idle connection).
        await new Promise((r) => setTimeout(r, 1000));

        child.kill('SIGTERM');
        // It says so as it stops listening: from then on a new connection is refused.
        expect(await until(() => log.includes('"msg":"shutting down"'), 10_000)).toBe(true);
        await expect(
          fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }),
        ).rejects.toThrow();

        socket.write(body.slice(5));
        await new Promise((r) => socket.on('close', r));
        expect(response).toMatch(/^HTTP\/1\.1 403 /); // answered: no CSRF token, but answered

        expect(await exited, log.slice(-2000)).toBe(0);
        expect(log).toContain('"msg":"stopped"');
        migrated = mkdtempSync(join(tmpdir(), 'shipyard-migrated-'));
        cpSync(dataDir, migrated, { recursive: true });
      } finally {
        child.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    TEST_MS,
  );

  // The documented launchers: SIGTERM to the launcher (as `docker stop` sends it to the
  // container's first process) must reach the server, which drains and exits 0, and the launcher
  // with it: no server left serving without its launcher.
  for (const [name, command, args] of [
    ['npm start', 'npm', ['start']],
    ['npx shipyard serve', 'npm', ['exec', '--', 'shipyard', 'serve']],
    ['bin/shipyard serve', 'bin/shipyard', ['serve']],
  ] as const) {
    it(
      `stops the server when its launcher, ${name}, gets SIGTERM`,
      async () => {
        const { dataDir, port, env } = await ownServer('shipyard-term-', true);
        const launcher = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let log = '';
        launcher.stderr.on('data', (d) => (log += d));
        const exited = new Promise<number | null>((r) => launcher.on('exit', (code) => r(code)));
        try {
          await until(() => log.includes('shipyard listening'));
          expect(log).toContain('shipyard listening');
          expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
          launcher.kill('SIGTERM');
          expect(await exited).toBe(0);
          expect(log).toContain('"msg":"stopped"');
          await expect(
            fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }),
          ).rejects.toThrow();
        } finally {
          launcher.kill('SIGKILL');
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
      TEST_MS,
    );
  }

  // Killed outright, a launcher can pass nothing on; the server must not go on serving alone,
  // holding the port and the embedded database, whether it was serving already or still starting.
  for (const when of ['once it serves', 'while it is starting'] as const) {
    it(
      `stops the server when its launcher is killed with SIGKILL ${when}`,
      async () => {
        // Killed while starting, it must be slow to start: from nothing, its migrations still to run.
        const { dataDir, port, env } = await ownServer('shipyard-kill-', when === 'once it serves');
        const launcher = spawn('bin/shipyard', ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        // The server writes to the same pipe after its launcher is gone.
        let log = '';
        launcher.stderr.on('data', (d) => (log += d));
        const waitFor = async (done: () => boolean, what: string) => expect(await until(done), what).toBe(true);
        // The server process, not the build's esbuild, which the launcher may be running first.
        let serverPid = 0;
        const serverStarted = () => {
          try {
            serverPid = Number(execFileSync('pgrep', ['-P', String(launcher.pid), '-f', 'dist/src/main.js']));
            return serverPid > 0;
          } catch {
            return false; // pgrep: no such process yet
          }
        };
        try {
          if (when === 'once it serves') {
            await waitFor(() => log.includes('shipyard listening'), 'listening');
            await waitFor(serverStarted, 'the server process found');
            expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
          } else {
            await waitFor(serverStarted, 'the server process started');
            expect(log).not.toContain('shipyard listening');
          }
          launcher.kill('SIGKILL');
          await waitFor(() => log.includes('"msg":"stopped"'), 'stopped');
          expect(log).toContain('"reason":"its launcher ended"');
          await expect(
            fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }),
          ).rejects.toThrow();
        } finally {
          launcher.kill('SIGKILL');
          // A server this test failed to stop would keep the port and the directory: not past the test.
          try {
            if (serverPid) process.kill(serverPid, 'SIGKILL');
          } catch {
            // stopped, as it should have
          }
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
      TEST_MS,
    );
  }
});

describe('starting on a port another process holds', () => {
  it(
    'says so at once, with how to choose another, before building or opening anything',
    async () => {
      const { dataDir, port, env } = await ownServer('shipyard-busy-');
      const holder = createServer();
      await new Promise<void>((r) => holder.listen(port, '0.0.0.0', r));
      try {
        const launcher = spawn('bin/shipyard', ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        launcher.stderr.on('data', (d) => (err += d));
        const code = await new Promise<number | null>((r) => launcher.on('exit', r));
        expect(code).toBe(1);
        expect(err).toContain(
          `shipyard: port ${port} is in use (another server?): choose another, e.g. PORT=${port + 1} make run`,
        );
        expect(err).not.toContain('building');
      } finally {
        await new Promise((r) => holder.close(r));
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    TEST_MS,
  );
});
