/**
 * The MCP endpoint against the official conformance suite (@modelcontextprotocol/conformance):
 * every server scenario the suite lists. Our transport and our tools/list and tools/call handlers
 * (src/mcp/transport.ts, server.ts) are not the SDK's own, so this checks them with a client we
 * did not write. The scenarios in NOT_APPLICABLE need what this server does not declare (the
 * suite's own fixture tools, resources, prompts, logging, completion, server-to-client requests
 * or SSE streams); each says why. Every other scenario must pass, and a scenario the suite adds
 * later runs here at once. The server is started as `make run` starts it, and its key made on
 * the web as a newcomer makes one. The CLI cannot send an API key, so it talks to a small proxy
 * that adds one and passes every other header (Host and Origin included) as it came.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './harness.js';
import { signedUpBrowser } from './cookie-browser.js';

const run = promisify(execFile);
const cli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

let server: ChildProcess;
let dataDir = '';
let proxy: http.Server;
let proxyUrl: string;
let target: URL;
let token: string;
const out = mkdtempSync(join(tmpdir(), 'shipyard-conformance-'));

beforeAll(async () => {
  proxy = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as AddressInfo).port;
  proxyUrl = `http://127.0.0.1:${port}/mcp`;
  // Started as `make run` starts it (`bin/shipyard serve`: its own process, the embedded
  // database), configured as by default (PUBLIC_URL http://localhost:PORT, no
  // MCP_ALLOWED_ORIGINS), with the proxy standing where clients reach the service. The suite
  // calls it through the loopback address, so its "valid localhost" requests come from
  // http://127.0.0.1:PORT: the same origin under another loopback name.
  const serverPort = await freePort();
  dataDir = mkdtempSync(join(tmpdir(), 'shipyard-conformance-data-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(serverPort),
    PUBLIC_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    GITHUB_SYNC_INTERVAL_MINUTES: '0',
  };
  delete env.DATABASE_URL;
  delete env.MCP_ALLOWED_ORIGINS;
  server = spawn('bin/shipyard', ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d) => (log += d));
  server.stderr!.on('data', (d) => (log += d));
  for (let i = 0; i < 600 && !log.includes('shipyard listening'); i++) await new Promise((r) => setTimeout(r, 250));
  expect(log, log.slice(-2000)).toContain('shipyard listening');
  target = new URL(`http://127.0.0.1:${serverPort}/api/v1/mcp`);
  token = await keyFromTheWeb(`http://127.0.0.1:${serverPort}`);
}, 180_000);

/** A key made as a newcomer makes it: sign up, Settings → Manage API keys, the MCP scopes. */
async function keyFromTheWeb(base: string): Promise<string> {
  const { b } = await signedUpBrowser(base);
  await b.get('/settings/keys/new');
  const made = await b.post('/settings/keys', {
    _csrf: b.csrf(),
    name: 'conformance',
    scopes: ['projects.read', 'projects.write', 'content.write'],
    expiry: '7',
  });
  expect(made.location).toBe('/settings/keys/created');
  const shown = await b.get('/settings/keys/created');
  return /data-testid="new-token">([^<]+)</.exec(shown.text)![1]!.trim();
}

afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

const FIXTURE = "calls the suite's fixture tool";
/** The server scenarios that test capabilities this server does not declare, each with its reason. */
const NOT_APPLICABLE: Record<string, string> = {
  'logging-set-level': 'logging/setLevel: the server declares no logging capability',
  'completion-complete': 'completion/complete: the server declares no completions capability',
  'tools-call-simple-text': `${FIXTURE} test_simple_text`,
  'tools-call-image': `${FIXTURE} test_image_content`,
  'tools-call-audio': `${FIXTURE} test_audio_content`,
  'tools-call-embedded-resource': `${FIXTURE} test_embedded_resource`,
  'tools-call-mixed-content': `${FIXTURE} test_multiple_content_types`,
  'tools-call-with-logging': `${FIXTURE} test_tool_with_logging (and logging)`,
  'tools-call-error': `${FIXTURE} test_error_handling`,
  'tools-call-with-progress': `${FIXTURE} test_tool_with_progress (progress needs a stream; answers are JSON)`,
  'tools-call-sampling': `${FIXTURE} test_sampling (a server-to-client request: needs a stream)`,
  'tools-call-elicitation': `${FIXTURE} test_elicitation (a server-to-client request: needs a stream)`,
  'json-schema-2020-12': `${FIXTURE} json_schema_2020_12_tool`,
  'elicitation-sep1034-defaults': `${FIXTURE} test_elicitation_sep1034_defaults (a server-to-client request)`,
  'elicitation-sep1330-enums': `${FIXTURE} test_elicitation_sep1330_enums (a server-to-client request)`,
  'server-sse-polling': 'SSE streams: the server is stateless and answers JSON only (GET is 405)',
  'server-sse-multiple-streams': 'SSE streams: the server is stateless and answers JSON only (GET is 405)',
  'resources-list': 'resources: the server declares no resources capability',
  'resources-read-text': 'resources: the server declares no resources capability',
  'resources-read-binary': 'resources: the server declares no resources capability',
  'resources-templates-read': 'resources: the server declares no resources capability',
  'resources-subscribe': 'resources: the server declares no resources capability',
  'resources-unsubscribe': 'resources: the server declares no resources capability',
  'prompts-list': 'prompts: the server declares no prompts capability',
  'prompts-get-simple': 'prompts: the server declares no prompts capability',
  'prompts-get-with-args': 'prompts: the server declares no prompts capability',
  'prompts-get-embedded-resource': 'prompts: the server declares no prompts capability',
  'prompts-get-with-image': 'prompts: the server declares no prompts capability',
};

/** The server scenarios this version of the suite lists (`conformance list --server`). */
function serverScenarios(): string[] {
  const listed = execFileSync(process.execPath, [cli, 'list', '--server'], { encoding: 'utf8' });
  return [...listed.matchAll(/^\s+- ([a-z0-9-]+) \[/gm)].map((m) => m[1]!);
}
const scenarios = serverScenarios();

type Check = { id: string; status: string; errorMessage?: string };

describe('MCP conformance suite', () => {
  it('lists the server scenarios, and every one left out is one it still has', () => {
    expect(scenarios).toEqual(
      expect.arrayContaining(['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']),
    );
    for (const name of Object.keys(NOT_APPLICABLE)) expect(scenarios, name).toContain(name);
  });

  for (const scenario of scenarios.filter((s) => !(s in NOT_APPLICABLE))) {
    it(`passes ${scenario}`, async () => {
      const dir = join(out, scenario);
      // The CLI exits non-zero when a check fails; what failed is read from its results.
      const ran: { stdout?: string; stderr?: string } = await run(
        process.execPath,
        [cli, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', dir],
        { timeout: 30_000 },
      ).catch((err: { stdout?: string; stderr?: string }) => err);
      const results = existsSync(dir) ? readdirSync(dir) : [];
      expect(results, `no results from the conformance CLI:\n${ran.stdout}\n${ran.stderr}`).toHaveLength(1);
      const checks = JSON.parse(readFileSync(join(dir, results[0]!, 'checks.json'), 'utf8')) as Check[];
      expect(checks.length).toBeGreaterThan(0);
      expect(checks.map((c) => [c.id, c.status, c.errorMessage ?? ''])).toEqual(
        checks.map((c) => [c.id, 'SUCCESS', '']),
      );
    }, 40_000);
  }
});
