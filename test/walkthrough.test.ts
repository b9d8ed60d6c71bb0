/**
 * docs/walkthrough.sh, the README's first calls, run as a newcomer runs it: bash against a
 * listening server with a key holding the five scopes it names. It must get to its last step.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort, userWithKey, useServer } from './harness.js';

// Asynchronous on purpose: the server under test runs in this process and must keep answering.
const run = promisify(execFile);

const { t } = useServer();

/**
 * A PATH holding only what the script says it needs (bash, curl and the text tools beside them),
 * so that no step can start Node or jq.
 */
function bareTools(): { path: string; bash: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'walkthrough-path-'));
  const found = (tool: string) => {
    const at = (process.env.PATH ?? '')
      .split(delimiter)
      .map((d) => join(d, tool))
      .find((p) => existsSync(p));
    if (!at) throw new Error(`${tool} is not on the PATH`);
    return at;
  };
  for (const tool of ['bash', 'curl', 'grep', 'sed', 'paste', 'cat', 'date', 'dirname'])
    symlinkSync(found(tool), join(dir, tool));
  return { path: dir, bash: found('bash'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('the README walk-through', () => {
  it('runs from the first call to the 403 at its end, with curl and no Node', async () => {
    const ada = await userWithKey(t, [
      'profile.read',
      'projects.read',
      'projects.write',
      'content.read',
      'content.write',
    ]);
    const tools = bareTools();
    const { stdout } = await run(tools.bash, ['docs/walkthrough.sh'], {
      env: { PATH: tools.path, KEY: ada.token, SHIPYARD_URL: t.baseUrl },
    }).finally(tools.remove);
    expect(stdout).toContain(`== Who the key belongs to (profile.read)\n${ada.user.username}\n`);
    expect(stdout).toMatch(/project [0-9a-f-]{36}\n/);
    expect(stdout).toContain('1. Cut the gears\n2. Assemble the mill\n');
    expect(stdout).toContain('Week 1\n');
    expect(stdout).toContain('slipped by days: 28\nhealth: at_risk\n');
    expect(stdout).toMatch(/image [0-9a-f-]{36}\npost [0-9a-f-]{36}\n/);
    expect(stdout).toContain('Nice!\nrocket: 1\n');
    expect(stdout).toMatch(/project: Analytical Engine \d+\n/);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('403 Insufficient scope: needs jobs.read');
  }, 60_000);

  it('stops at the first refused call and says which', async () => {
    const viewer = await userWithKey(t, ['profile.read']);
    const failed = await run('bash', ['docs/walkthrough.sh'], {
      env: { ...process.env, KEY: viewer.token, SHIPYARD_URL: t.baseUrl },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((failed as { code: number }).code).not.toBe(0);
    expect((failed as { stderr: string }).stderr).toMatch(/^HTTP 403 from .*\/api\/v1\/projects\n/);
  }, 60_000);

  it('says where it looked, and how to point it elsewhere, when nothing answers there', async () => {
    const port = await freePort();
    const failed = await run('bash', ['docs/walkthrough.sh'], {
      env: { ...process.env, KEY: 'shipyard_pat_x', PORT: String(port), SHIPYARD_URL: '' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((failed as { code: number }).code).not.toBe(0);
    expect((failed as { stderr: string }).stderr).toContain(
      `Nothing answers at http://localhost:${port}/api/v1: is the server running (make run)? On another port, set PORT=`,
    );
  }, 60_000);
});
