/**
 * OAuth sign-in against the service as the README starts it (`make run`, which runs `bin/shipyard
 * serve`: its own process, the embedded database, PUBLIC_URL defaulting to
 * http://localhost:PORT, bound to this machine only), driven by the MCP SDK client: discovery from a bare 401, registration,
 * the person's sign-up and consent over HTTP, the exchange, tools/list and a tool call, then the
 * key revoked on the keys page and the next call refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, uniqueName } from './harness.js';
import { Browser } from './cookie-browser.js';
import { Agent } from './oauth-agent.js';

const REDIRECT = 'http://127.0.0.1:53684/callback';
let server: ChildProcess;
let dataDir: string;
let site: string;
let log = '';
let portUsed = 0;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'shipyard-oauth-served-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    GITHUB_SYNC_INTERVAL_MINUTES: '0',
  };
  delete env.DATABASE_URL;
  delete env.PUBLIC_URL;
  delete env.HOST;
  // Its own process group: make, npm and the server stop together.
  server = spawn('make', ['--no-print-directory', 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  server.stdout!.on('data', (d) => (log += d));
  server.stderr!.on('data', (d) => (log += d));
  for (let i = 0; i < 600 && !log.includes('shipyard listening'); i++) await new Promise((r) => setTimeout(r, 250));
  expect(log, log.slice(-2000)).toContain('shipyard listening');
  site = `http://localhost:${port}`;
  portUsed = port;
}, 180_000);
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the service as `make run` starts it', () => {
  it('serves this machine only: not an address other machines reach', async (ctx) => {
    const shared = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    if (!shared) return ctx.skip();
    expect((await fetch(`http://127.0.0.1:${portUsed}/healthz`)).status).toBe(200);
    await expect(
      fetch(`http://${shared}:${portUsed}/healthz`, { signal: AbortSignal.timeout(5000) }),
    ).rejects.toThrow();
  });
});

describe('OAuth sign-in on the service as `make run` starts it', () => {
  it('goes from a bare 401 to a key, uses it, and loses it when revoked on the keys page', async () => {
    const mcpUrl = `${site}/api/v1/mcp`;
    const call = (token?: string) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      });
    const bare = await call();
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(
      `Bearer scope="projects.read projects.write content.write", resource_metadata="${site}/.well-known/oauth-protected-resource/api/v1/mcp"`,
    );

    const agent = new Agent({ redirect: REDIRECT, name: 'Served agent' });
    expect(await auth(agent, { serverUrl: mcpUrl })).toBe('REDIRECT');
    const b = new Browser(site);
    const authorize = agent.authorizationUrl!;
    const toConsent = await b.get(authorize.pathname + authorize.search);
    const consent = new URL(toConsent.location!, site);
    // Signed out: sign up on the way, and come back to the consent screen.
    const toSignIn = await b.get(consent.pathname + consent.search);
    expect(toSignIn.location).toMatch(/^\/signin\?next=/);
    await b.get('/signup');
    const username = uniqueName();
    const made = await b.post('/signup', {
      _csrf: b.csrf(),
      next: consent.pathname + consent.search,
      username,
      email: `${username}@example.test`,
      password: 'a long enough password',
    });
    expect(made.location).toBe(consent.pathname + consent.search);
    const page = await b.get(made.location!);
    expect(page.text).toContain('Connect <bdi>Served agent</bdi>');
    const answered = await b.post('/oauth/consent', {
      _csrf: b.csrf(),
      request: consent.searchParams.get('request')!,
      scopes: ['projects.read', 'projects.write'],
      expiry: '30',
      decision: 'approve',
    });
    expect(answered.status, answered.text).toBe(303);
    const code = new URL(answered.location!).searchParams.get('code')!;
    expect(await auth(agent, { serverUrl: mcpUrl, authorizationCode: code })).toBe('AUTHORIZED');

    const client = new Client({ name: 'served-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: agent }));
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('create_milestone');
    expect(tools).not.toContain('create_build_log');
    const mine = await client.callTool({ name: 'list_my_projects', arguments: {} });
    expect(mine.isError).toBeFalsy();
    await client.close();

    const keys = await b.get('/settings/keys');
    const id = /\/settings\/keys\/([0-9a-f-]{36})\/revoke/.exec(keys.text)![1]!;
    await b.get(`/settings/keys/${id}/revoke`);
    expect((await b.post(`/settings/keys/${id}/revoke`, { _csrf: b.csrf() })).status).toBe(303);
    const after = await call(agent.saved!.access_token);
    expect(after.status).toBe(401);
    // Nothing secret reached the log: not the key, not the code.
    expect(log).not.toContain(agent.saved!.access_token);
    expect(log).not.toContain(code);
  }, 60_000);
});
