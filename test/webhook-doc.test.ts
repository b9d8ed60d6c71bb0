/**
 * docs/webhooks.md, followed as a newcomer would: its receiver is made exactly as the doc says
 * (a folder of its own, `npm init -y`, the install, the code saved as it is shown) and receives a
 * real, signed event from the server; and a local URL, refused by a server that does not allow
 * them, is refused with the setting that allows them named.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { freePort, raw, startServer, type TestServer, uniqueName, userWithKey } from './harness.js';

const doc = readFileSync('docs/webhooks.md', 'utf8');
const section = doc.slice(doc.indexOf('## Receiving'));
const commands = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
const code = /```js\n\/\/ receiver\.mjs\n[\s\S]*?```/.exec(section)![0].replace(/^```js\n|```$/g, '');

let t: TestServer;
let dir = '';
let receiver: ChildProcess | undefined;
beforeAll(async () => {
  t = await startServer({ webhooks: { worker: true, allowLocal: true } });
});
afterAll(async () => {
  receiver?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

describe('the webhook receiver in docs/webhooks.md', () => {
  it('is made as the doc says and receives a signed event', async () => {
    expect(commands).toContain('npm init -y && npm install standardwebhooks');
    expect(commands).toContain('node receiver.mjs');
    dir = mkdtempSync(join(tmpdir(), 'shipyard-receiver-'));
    // The doc's commands; the install takes the library (and what it needs) packed from this
    // project's own node_modules, as tests reach no registry.
    const npm = (args: string[]) => spawnSync('npm', args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(npm(['init', '-y']).status).toBe(0);
    const packed = ['standardwebhooks', '@stablelib/base64', 'fast-sha256'].map((name) => {
      const pack = npm(['pack', '--silent', '--ignore-scripts', resolve('node_modules', name)]);
      expect(pack.status, pack.stderr).toBe(0);
      return `./${pack.stdout.trim().split('\n').at(-1)}`;
    });
    const install = npm(['install', '--offline', '--no-audit', '--no-fund', ...packed]);
    expect(install.status, install.stderr).toBe(0);
    writeFileSync(join(dir, 'receiver.mjs'), code);

    const owner = await userWithKey(t, ['projects.read', 'projects.write']);
    const project = (await api.createProject({ client: owner.client, body: { name: uniqueName('Received') } })).data!;
    const port = await freePort();
    const created = await api.createWebhook({
      client: owner.client,
      path: { projectId: project.id },
      body: { url: `http://localhost:${port}/`, events: ['milestone.created'] },
    });
    expect(created.response?.status).toBe(201);

    const lines: string[] = [];
    receiver = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: { ...process.env, SHIPYARD_WEBHOOK_SECRET: created.data!.secret, PORT: String(port) },
    });
    receiver.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(...chunk.trim().split('\n')));
    const until = async (what: string) => {
      for (let i = 0; i < 100 && !lines.includes(what); i++) await new Promise((r) => setTimeout(r, 100));
      return lines;
    };
    expect(await until(`listening on http://localhost:${port}/`)).toContain(`listening on http://localhost:${port}/`);

    await api.createMilestone({ client: owner.client, path: { projectId: project.id }, body: { title: 'Heard' } });
    expect(await until('milestone.created Heard')).toContain('milestone.created Heard');
  }, 120_000);
});

describe('a local URL on a server that does not allow them', () => {
  it('is refused with the setting that allows them named', async () => {
    const strict = await startServer();
    try {
      const owner = await userWithKey(strict, ['projects.write']);
      const project = await raw(strict, 'POST', '/projects', { token: owner.token, body: { name: 'Strict' } });
      const res = await raw(strict, 'POST', `/projects/${(project.json as { id: string }).id}/webhooks`, {
        token: owner.token,
        body: { url: 'http://localhost:8080/', events: ['milestone.created'] },
      });
      expect(res.status).toBe(422);
      expect(res.json.detail).toMatch(/^url must be an https URL\. .*WEBHOOK_ALLOW_LOCAL_URLS=true/);
      const loopback = await raw(strict, 'POST', `/projects/${(project.json as { id: string }).id}/webhooks`, {
        token: owner.token,
        body: { url: 'https://127.0.0.1/', events: ['milestone.created'] },
      });
      expect(loopback.status).toBe(422);
      expect(loopback.json.detail).toMatch(/WEBHOOK_ALLOW_LOCAL_URLS=true/);
    } finally {
      await strict.close();
    }
  });
});
