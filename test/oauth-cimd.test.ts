/**
 * Client ID Metadata Documents (src/oauth/client-metadata.ts): a client whose client_id is an
 * https URL, signing in through the MCP SDK client with `clientMetadataUrl` (no registration),
 * against documents served over https from this machine (a self-signed certificate made here
 * with openssl; the server is told to trust it and to fetch from loopback, as only tests may).
 * Then the documents refused, and the server-side request forgery guard as it stands outside
 * tests: nothing but public https addresses is ever fetched.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { startServer, uniqueName, type TestServer } from './harness.js';
import { type Browser, signedUpBrowser } from './cookie-browser.js';
import { Agent } from './oauth-agent.js';
import { ClientMetadataDocuments } from '../src/oauth/client-metadata.js';

const REDIRECT = 'http://127.0.0.1:53683/callback';
let dir: string;
let docs: Server;
let docsBase: string;
let t: TestServer;
let site: string;
/** What the document server answers, by path. */
const served = new Map<string, { status?: number; type?: string; body: string; headers?: Record<string, string> }>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shipyard-cimd-'));
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  docs = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    const answer = served.get(req.url ?? '') ?? { status: 404, body: 'not here' };
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/json', ...answer.headers });
    res.end(answer.body);
  });
  await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
  docsBase = `https://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  t = await startServer({ publicUrlAtItsPort: true, oauthClientMetadata: { allowLoopback: true, ca: cert } });
  site = t.baseUrl.replace('127.0.0.1', 'localhost');
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => docs?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Serves a client's document at `path`; returns its URL (the client_id). */
function document(path: string, fields: Record<string, unknown> = {}): string {
  const id = `${docsBase}${path}`;
  served.set(path, {
    body: JSON.stringify({ client_id: id, client_name: 'Metadata agent', redirect_uris: [REDIRECT], ...fields }),
  });
  return id;
}

async function signedIn(): Promise<Browser> {
  const { b } = await signedUpBrowser(t.baseUrl);
  await b.get('/settings/keys');
  return b;
}

describe('a client named by its metadata document', () => {
  it('signs in without registering: the consent names the document, and the key is made', async () => {
    const agent = new Agent({
      redirect: REDIRECT,
      name: 'Metadata agent',
      clientMetadataUrl: document('/clients/agent.json'),
    });
    expect(await auth(agent, { serverUrl: `${site}/api/v1/mcp` })).toBe('REDIRECT');
    expect(agent.authorizationUrl!.searchParams.get('client_id')).toBe(agent.clientMetadataUrl);
    const b = await signedIn();
    const started = await b.get(agent.authorizationUrl!.pathname + agent.authorizationUrl!.search);
    expect(started.status, started.text).toBe(302);
    const page = await b.get(started.location!);
    expect(page.text).toContain('Connect <bdi>Metadata agent</bdi>');
    expect(page.text).toContain(agent.clientMetadataUrl);
    const request = new URL(started.location!, site).searchParams.get('request')!;
    const answered = await b.post('/oauth/consent', {
      _csrf: b.csrf(),
      request,
      scopes: ['projects.read'],
      expiry: '7',
      decision: 'approve',
    });
    const code = new URL(answered.location!).searchParams.get('code')!;
    expect(await auth(agent, { serverUrl: `${site}/api/v1/mcp`, authorizationCode: code })).toBe('AUTHORIZED');
    expect(agent.saved!.access_token).toMatch(/^shipyard_pat_/);
  });

  it.each([
    [
      'names another client_id',
      (path: string) => document(path, { client_id: `${docsBase}/other.json` }),
      /another client_id/,
    ],
    [
      'asks for a client secret',
      (path: string) => document(path, { token_endpoint_auth_method: 'client_secret_basic' }),
      /public clients/,
    ],
    [
      'has an unsafe redirect URI',
      (path: string) => document(path, { redirect_uris: ['javascript:alert(1)'] }),
      /redirect_uris/,
    ],
    [
      'is larger than 5 KB',
      (path: string) => document(path, { client_name: 'M', padding: 'x'.repeat(6000) }),
      /larger than 5120 bytes/,
    ],
    [
      'is not JSON',
      (path: string) => {
        served.set(path, { type: 'text/html', body: '<html></html>' });
        return `${docsBase}${path}`;
      },
      /not application\/json/,
    ],
    [
      'redirects elsewhere',
      (path: string) => {
        served.set(path, { status: 302, headers: { location: `${docsBase}/clients/agent.json` }, body: '' });
        return `${docsBase}${path}`;
      },
      /answered 302/,
    ],
    ['is not there', (path: string) => `${docsBase}${path}`, /answered 404/],
  ])('refuses a document that %s, with invalid_client and nothing recorded', async (_, make, why) => {
    const id = make(`/clients/${uniqueName()}.json`);
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: id,
      redirect_uri: REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const res = await fetch(`${site}/authorize?${q}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(why);
  });
});

describe('the guard outside tests', () => {
  const guard = new ClientMetadataDocuments();
  it.each([
    ['https://127.0.0.1/client.json', /not a public address/],
    ['https://localhost/client.json', /not a public address/],
    ['https://10.1.2.3/client.json', /not a public address/],
    ['https://169.254.169.254/latest/meta-data', /not a public address/],
    ['https://[::1]/client.json', /not a public address/],
    ['https://[::ffff:127.0.0.1]/client.json', /not a public address/],
    ['https://[fd00::1]/client.json', /not a public address/],
    ['http://example.com/client.json', /https only/],
    ['https://example.com/', /has a path/],
    ['https://user:pw@example.com/client.json', /credentials/],
  ])('never fetches %s', async (url, why) => {
    await expect(guard.client(url)).rejects.toThrow(why);
  });
});
