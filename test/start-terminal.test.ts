/**
 * `make run` at a terminal, as a newcomer sees it: the JSON lines for machines, then, last of
 * everything the start prints, plain words saying where to open and what to run next. A pseudo
 * terminal (`script`, from util-linux) makes the server's output a TTY, as a person's is.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './harness.js';

const haveScript = spawnSync('script', ['--version']).status === 0;
let server: ChildProcess | undefined;
let dataDir = '';

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.on('exit', r));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(!haveScript)('make run at a terminal', () => {
  it('ends its start with where to open and the next command, in plain words', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shipyard-terminal-'));
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      GITHUB_SYNC_INTERVAL_MINUTES: '0',
    };
    for (const name of ['DATABASE_URL', 'PUBLIC_URL', 'HOST', 'LOG_LEVEL', 'LOG_FORMAT']) delete env[name];
    server = spawn('script', ['-qfec', 'make --no-print-directory run', '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    server.stdout!.on('data', (d) => (out += d));
    const site = `http://localhost:${port}`;
    for (let i = 0; i < 600 && !out.includes('(Ctrl-C stops the server)'); i++)
      await new Promise((r) => setTimeout(r, 250));
    // Anything else the start has to say comes within moments of it, never after it.
    await new Promise((r) => setTimeout(r, 2000));
    const lines = out
      .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean);
    expect(lines.slice(-2), out.slice(-2000)).toEqual([
      `Shipyard is running at ${site} — open ${site}/signup to create your account, then a key under Settings → Manage API keys.`,
      `Next: curl -H "Authorization: Bearer <your key>" ${site}/api/v1/users/me   (Ctrl-C stops the server)`,
    ]);
    // Above it, the lines machines read.
    expect(out).toContain('shipyard listening');
  }, 180_000);
});
