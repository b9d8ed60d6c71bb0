/**
 * The MCP endpoint against the official conformance suite (@modelcontextprotocol/conformance),
 * the scenarios that apply to this server: the initialize handshake, ping and tools/list. Our
 * transport and our tools/list and tools/call handlers (src/mcp/transport.ts, server.ts) are not
 * the SDK's own, so this checks them with a client we did not write. The suite's other
 * scenarios call fixture tools (test_simple_text, …), prompts and resources this server does not
 * have. The CLI cannot send an API key, so it talks to a small proxy that adds one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, userWithKey, type TestServer } from './harness.js';

const run = promisify(execFile);
const cli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

let t: TestServer;
let proxy: http.Server;
let proxyUrl: string;
const out = mkdtempSync(join(tmpdir(), 'shipyard-conformance-'));

beforeAll(async () => {
  t = await startServer();
  const { token } = await userWithKey(t, ['projects.read', 'projects.write', 'content.write']);
  const target = new URL(`${t.apiUrl}/mcp`);
  proxy = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: req.method,
        headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` },
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
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await t?.close();
  rmSync(out, { recursive: true, force: true });
});

type Check = { id: string; status: string; errorMessage?: string };

describe('MCP conformance suite', () => {
  for (const scenario of ['server-initialize', 'ping', 'tools-list']) {
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
