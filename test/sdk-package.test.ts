/**
 * The SDK as an integrator gets it: `make sdk`'s tarball installed into a fresh project (no
 * registry needed: the package has no dependencies), then a script in that project calls a
 * running server with a real key.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, type TestServer } from './harness.js';

// Asynchronous on purpose: the server under test runs in this process and must keep answering.
const run = promisify(execFile);

let t: TestServer;
let project: string;
beforeAll(async () => {
  t = await startServer();
  project = mkdtempSync(join(tmpdir(), 'shipyard-sdk-user-'));
});
afterAll(async () => {
  await t?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the SDK package', () => {
  it('installs from the packed tarball and calls a running server', async () => {
    const tarball = (await run(process.execPath, ['--import', 'tsx', 'codegen/sdk/build.ts'])).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    expect(tarball).toMatch(/shipyard-sdk-\d+\.\d+\.\d+\.tgz$/);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: project });

    const ada = await userWithKey(t, ['profile.read', 'projects.read', 'projects.write']);
    writeFileSync(
      join(project, 'use.mjs'),
      `
      import { shipyardClient, getCurrentUser, createProject, listProjects, listJobs } from '@shipyard/sdk';
      const client = shipyardClient({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY });
      const me = await getCurrentUser({ client });
      const created = await createProject({ client, body: { name: 'From the SDK' } });
      const mine = await listProjects({ client, query: { owner: 'me' } });
      const jobs = await listJobs({ client });
      console.log(JSON.stringify({ me: me.data.username, created: created.response.status, names: mine.data.items.map((p) => p.name), jobs: jobs.response.status, jobsError: jobs.error }));
    `,
    );
    const { stdout: out } = await run(process.execPath, ['use.mjs'], {
      cwd: project,
      env: { ...process.env, SHIPYARD_URL: t.baseUrl, SHIPYARD_API_KEY: ada.token },
    });
    const result = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(result.me).toBe(ada.user.username);
    expect(result.created).toBe(201);
    expect(result.names).toEqual(['From the SDK']);
    expect(result.jobs).toBe(403);
    expect(result.jobsError).toMatchObject({ status: 403, requiredScope: 'jobs.read' });
  }, 120_000);
});
