/**
 * OAuth sign-in with the browser part in Chromium (headless, playwright-core): the MCP SDK
 * client starts the sign-in, the browser opens its authorization URL, signs in, unticks a scope on
 * the consent screen and approves, and lands on the client's loopback listener with the code
 * (so the consent page's form-action policy lets the answer through). The client exchanges the
 * code and lists only the tools of the scopes left ticked. The consent screen has no serious axe-core
 * violation in either colour scheme, and no console error or CSP violation. Like
 * test/browser.test.ts, it needs Chromium (REQUIRE_BROWSER=1 in .ci/run).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, uniqueName, type TestServer } from './harness.js';
import { Agent } from './oauth-agent.js';
import { violations } from './axe.js';
import { createUser } from '../src/users/users.service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.REQUIRE_BROWSER === '1')
  throw new Error(`REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM}`);
const SHOTS = 'test-results/screenshots';

let t: TestServer;
let browser: Browser;
let site: string;
/** The client's loopback listener: where the browser brings the code. */
let listener: Server;
let redirectUrl: string;
let arrived: (query: URLSearchParams) => void;
beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  t = await startServer({ publicUrlAtItsPort: true });
  site = t.baseUrl.replace('127.0.0.1', 'localhost');
  listener = createServer((req, res) => {
    arrived(new URL(req.url!, 'http://127.0.0.1').searchParams);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Signed in</title><p>You may close this tab.</p>');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  redirectUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => listener?.close(r));
  await t?.close();
});

/** A person with an account, signing in on the page the sign-in sends them to. */
async function signInThere(page: Page) {
  const username = uniqueName();
  await createUser(t.db.orm.em.fork(), {
    username,
    email: `${username}@example.test`,
    password: 'engines and looms all day',
  });
  await page.waitForURL(/\/signin\?next=/);
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password').fill('engines and looms all day');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/consent\?request=/);
}

describe.skipIf(!available)('OAuth sign-in in Chromium', { timeout: 120_000 }, () => {
  it('signs in, unticks a scope, approves, and the client gets a key with what was left ticked', async () => {
    const agent = new Agent({ redirect: () => redirectUrl, name: 'Browser agent' });
    const mcpUrl = `${site}/api/v1/mcp`;
    expect(await auth(agent, { serverUrl: mcpUrl })).toBe('REDIRECT');
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
    });
    await page.goto(agent.authorizationUrl!.href);
    await signInThere(page);
    await page.getByRole('heading', { name: /Connect Browser agent to your Shipyard account/ }).waitFor();
    await page.screenshot({ path: `${SHOTS}/oauth-consent.png`, fullPage: true });
    // The client asked for every scope (the metadata's list); the person keeps two.
    const boxes = page.getByRole('checkbox');
    for (const box of await boxes.all()) await box.uncheck();
    await page.getByLabel('(projects.read)', { exact: false }).check();
    await page.getByLabel('(content.write)', { exact: false }).check();
    await page.getByLabel('The key expires in').selectOption('7');
    const code = new Promise<URLSearchParams>((r) => {
      arrived = r;
    });
    await page.getByRole('button', { name: 'Approve' }).click();
    // The browser is let through to the client's listener (a form-action policy without it stops here).
    await page.waitForURL(/\/callback\?/);
    const query = await code;
    expect(query.get('iss')).toBe(site);
    await context.close();
    expect(errors).toEqual([]);

    expect(await auth(agent, { serverUrl: mcpUrl, authorizationCode: query.get('code')! })).toBe('AUTHORIZED');
    expect(agent.saved!.scope).toBe('content.write projects.read');
    const client = new Client({ name: 'browser-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: agent }));
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'create_build_log',
      'get_roadmap',
      'list_build_logs',
      'list_my_projects',
    ]);
    await client.close();
  });

  it("signs the API reference's try-it in: Authorize, approve, and the key is the person's", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${site}/docs`);
    await page.getByRole('heading', { name: 'Shipyard API' }).waitFor();
    const opened = context.waitForEvent('page');
    await page
      .getByRole('button', { name: /Authorize via oauth2/ })
      .first()
      .click();
    const popup = await opened;
    await signInThere(popup);
    await popup.getByRole('heading', { name: /Connect The Shipyard API reference/ }).waitFor();
    await popup.getByRole('button', { name: 'Approve' }).click();
    // The reference reads the code from its window, exchanges it, and fills in the bearer token.
    await page.waitForFunction(
      () => [...document.querySelectorAll('input')].some((i) => /^shipyard_pat_[0-9A-Za-z]{38}$/.test(i.value)),
      undefined,
      { timeout: 15_000 },
    );
    const keys = await context.newPage();
    await keys.goto(`${site}/settings/keys`);
    expect(await keys.locator('body').textContent()).toMatch(
      /The Shipyard API reference \(\/docs\)\s+connected through OAuth/,
    );
    await context.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`shows the consent screen in ${scheme} mode without an axe-core violation at either width`, async () => {
      const agent = new Agent({ redirect: () => redirectUrl, name: 'Browser agent' });
      expect(await auth(agent, { serverUrl: `${site}/api/v1/mcp` })).toBe('REDIRECT');
      const context = await browser.newContext({ colorScheme: scheme });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(agent.authorizationUrl!.href);
      await signInThere(page);
      await page.screenshot({ path: `${SHOTS}/${scheme}-oauth-consent.png`, fullPage: true });
      expect(await violations(page)).toEqual([]);
      await context.close();
    });
  }
});
