/**
 * OAuth sign-in for MCP clients (src/oauth/, docs/decisions/0011-oauth-sign-in.md), driven by the
 * MCP SDK client's own OAuth support: discovery from a bare 401, registration, the person's
 * consent in the web application (over HTTP with a cookie jar; test/browser.test.ts drives the
 * same page in Chromium), the code exchange, and the key it gives, used, listed and revoked. Then
 * every bad input the flow can meet, each answered by an OAuth error and nothing issued.
 */
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { uniqueName, userWithKey, useServer } from './harness.js';
import { Browser, signedUpBrowser } from './cookie-browser.js';
import { Agent } from './oauth-agent.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { OAuthGrant } from '../src/oauth/oauth-grant.entity.js';
import { OAuthClient } from '../src/oauth/oauth-client.entity.js';
import { sweepOAuth } from '../src/oauth/oauth.service.js';
import { MCP_SCOPES } from '../src/kernel/contract.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';

const { t } = useServer({ publicUrlAtItsPort: true });
/** The server as clients name it: PUBLIC_URL http://localhost:<port>, as `make run` sets it. */
let site: string;
let mcpUrl: string;
beforeAll(async () => {
  site = t.baseUrl.replace('127.0.0.1', 'localhost');
  mcpUrl = `${site}/api/v1/mcp`;
});

const REDIRECT = 'http://127.0.0.1:53682/callback';

/** A person signed in to the web application, with a cookie jar. */
async function person(): Promise<{ b: Browser; username: string }> {
  const { b, username, status } = await signedUpBrowser(t.baseUrl);
  expect(status).toBe(303);
  await b.get('/settings/keys');
  return { b, username };
}

/** The browser's part: /authorize, then the consent page; returns the consent page's request id. */
async function openConsent(b: Browser, authorizationUrl: URL) {
  const started = await b.get(authorizationUrl.pathname + authorizationUrl.search);
  expect(started.status, started.text).toBe(302);
  const consentPath = new URL(started.location!, site);
  expect(consentPath.pathname).toBe('/oauth/consent');
  const page = await b.get(consentPath.pathname + consentPath.search);
  expect(page.status, page.text).toBe(200);
  return { request: consentPath.searchParams.get('request')!, page };
}

/** Approves with these scopes and expiry; returns the redirect's query (code, state, iss). */
async function approve(b: Browser, request: string, scopes: string[], expiry = '7') {
  const answered = await b.post('/oauth/consent', { _csrf: b.csrf(), request, scopes, expiry, decision: 'approve' });
  expect(answered.status, answered.text).toBe(303);
  const to = new URL(answered.location!);
  expect(`${to.origin}${to.pathname}`).toBe(REDIRECT);
  return to.searchParams;
}

/** A public client registered by DCR, and a PKCE pair. */
async function registered(redirect = REDIRECT) {
  const res = await fetch(`${site}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Raw client', redirect_uris: [redirect] }),
  });
  expect(res.status).toBe(201);
  const client = (await res.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { clientId: client.client_id, verifier, challenge };
}

function authorizePath(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: mcpUrl,
    scope: 'projects.read projects.write',
    ...extra,
  });
  return `/authorize?${q}`;
}

async function token(form: Record<string, string>) {
  const res = await fetch(`${site}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, json: (await res.json()) as Record<string, string> };
}

/** A code approved by a signed-in person for a raw client. */
async function approvedCode(extra: Record<string, string> = {}) {
  const { b } = await person();
  const c = await registered();
  const { request } = await openConsent(b, new URL(authorizePath(c.clientId, c.challenge, extra), site));
  const code = (await approve(b, request, ['projects.read'])).get('code')!;
  return { ...c, code, b };
}

const grantsFor = async (clientId: string) => (await t.db.orm.em.fork().find(OAuthGrant, { clientId })).length;
const keysOf = async (clientId: string) => t.db.orm.em.fork().find(ApiKey, { oauthClientId: clientId });

describe('an MCP client that has only the URL', () => {
  it('finds how to sign in from a bare 401, and the metadata says what this server does', async () => {
    const bare = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(bare.status).toBe(401);
    const prmUrl = `${site}/.well-known/oauth-protected-resource/api/v1/mcp`;
    // The scopes the tools use, so that a client asks for those and no more.
    expect(bare.headers.get('www-authenticate')).toBe(
      `Bearer scope="${MCP_SCOPES.join(' ')}", resource_metadata="${prmUrl}"`,
    );
    const rest = await fetch(`${site}/api/v1/projects`);
    expect(rest.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${site}/.well-known/oauth-protected-resource"`,
    );

    for (const [url, resource, scopes] of [
      [prmUrl, mcpUrl, MCP_SCOPES],
      [`${site}/.well-known/oauth-protected-resource`, site, SCOPE_IDS],
    ] as const) {
      const prm = await (await fetch(url)).json();
      expect(prm).toMatchObject({
        resource,
        authorization_servers: [site],
        bearer_methods_supported: ['header'],
      });
      expect(prm.scopes_supported).toEqual([...scopes]);
    }
    const as = await (await fetch(`${site}/.well-known/oauth-authorization-server`)).json();
    expect(as).toMatchObject({
      issuer: site,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      registration_endpoint: `${site}/register`,
      revocation_endpoint: `${site}/revoke`,
    });
  });

  it('signs in through the SDK client, gets an ordinary key with what was ticked, uses it, and loses it on revocation', async () => {
    const agent = new Agent({ redirect: REDIRECT, name: 'Claude (test)' });
    expect(await auth(agent, { serverUrl: mcpUrl })).toBe('REDIRECT');
    const asked = agent.authorizationUrl!;
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(mcpUrl);

    const { b, username } = await person();
    const { request, page } = await openConsent(b, asked);
    expect(page.text).toContain('Connect <bdi>Claude (test)</bdi> to your Shipyard account?');
    expect(page.text).toContain('<code>127.0.0.1:53682</code>');
    // Its form may lead back to the client, and nowhere else.
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:53682;");
    const answer = await approve(b, request, ['projects.read', 'content.write'], '7');
    expect(answer.get('iss')).toBe(site);
    expect(answer.get('state')).toBe(asked.searchParams.get('state'));

    expect(await auth(agent, { serverUrl: mcpUrl, authorizationCode: answer.get('code')! })).toBe('AUTHORIZED');
    const tokens = agent.saved!;
    expect(tokens.access_token).toMatch(/^shipyard_pat_[0-9A-Za-z]{38}$/);
    expect(tokens.scope).toBe('content.write projects.read');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.expires_in).toBeGreaterThan(6 * 86_400);
    expect(tokens.expires_in).toBeLessThanOrEqual(7 * 86_400);

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: agent }));
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['create_build_log', 'get_roadmap', 'list_build_logs', 'list_my_projects']);
    const mine = await client.callTool({ name: 'list_my_projects', arguments: {} });
    expect(mine.isError).toBeFalsy();
    // The same key on REST, and on the keys page with its client's name.
    const me = await fetch(`${site}/api/v1/users/${username}/projects`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(me.status).toBe(403); // profile.read was not ticked: an ordinary key, with only what was ticked
    const keys = await b.get('/settings/keys');
    expect(keys.text).toContain('Claude (test)</bdi> <span class="hint">connected through OAuth</span>');
    const key = (await keysOf(String(agent.client!.client_id)))[0]!;
    expect(key.scopes).toEqual(['content.write', 'projects.read']);

    const confirm = await b.get(`/settings/keys/${key.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect((await b.post(`/settings/keys/${key.id}/revoke`, { _csrf: b.csrf() })).status).toBe(303);
    const after = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    });
    expect(after.status).toBe(401);
    // The way out for a key an app was given: sign in again from the app, not the keys page.
    expect(((await after.json()) as { error: { message: string } }).error.message).toBe(
      'Unauthorized: The API key has been revoked. It was given to this app through OAuth sign-in: sign in again from the app.',
    );
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(after.headers.get('www-authenticate')).toContain('resource_metadata=');
    await client.close();
  });

  it('asks, from a bare 401 met by the SDK client, for the three scopes the tools use: the consent screen offers those', async () => {
    const agent = new Agent({ redirect: REDIRECT, name: 'Bare client' });
    const client = new Client({ name: 'bare', version: '1.0.0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: agent })),
    ).rejects.toThrow();
    const asked = agent.authorizationUrl!;
    expect(asked.searchParams.get('scope')!.split(' ').sort()).toEqual([...MCP_SCOPES].sort());
    const { b } = await person();
    const { page } = await openConsent(b, asked);
    const offered = [...page.text.matchAll(/name="scopes" value="([a-z.]+)"/g)].map((m) => m[1]);
    const ticked = [...page.text.matchAll(/name="scopes" value="([a-z.]+)" checked/g)].map((m) => m[1]);
    expect(offered.sort()).toEqual([...MCP_SCOPES].sort());
    expect(ticked.sort()).toEqual([...MCP_SCOPES].sort());
    expect(page.text).toContain('At most one year');
  });

  it('brings a person without an account through sign-up and back to the consent screen', async () => {
    const c = await registered();
    const b = new Browser(t.baseUrl);
    const started = await b.get(authorizePath(c.clientId, c.challenge));
    const consent = new URL(started.location!, site);
    const toSignIn = await b.get(consent.pathname + consent.search);
    expect(toSignIn.status).toBe(303);
    const signIn = await b.get(toSignIn.location!);
    const signUpLink = /href="(\/signup\?next=[^"]+)"/.exec(signIn.text)![1]!;
    const signUp = await b.get(signUpLink.replaceAll('&amp;', '&'));
    const username = uniqueName();
    const made = await b.post('/signup', {
      _csrf: b.csrf(),
      next: /name="next" value="([^"]+)"/.exec(signUp.text)![1]!.replaceAll('&amp;', '&'),
      username,
      email: `${username}@example.test`,
      displayName: 'New Person',
      password: 'a long enough password',
    });
    expect(made.status).toBe(303);
    expect(made.location).toBe(consent.pathname + consent.search);
    expect((await b.get(made.location!)).text).toContain('Connect <bdi>Raw client</bdi>');
  });

  it('keeps serving a client that sends its key in a header, OAuth advertised or not', async () => {
    const { token } = await userWithKey(t, ['projects.read']);
    const client = new Client({ name: 'header-client', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('revokes through RFC 7009, for the client the key was given to only', async () => {
    const c = await approvedCode();
    const issued = await token({
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
      redirect_uri: REDIRECT,
      resource: mcpUrl,
    });
    expect(issued.status).toBe(200);
    const other = await registered();
    await fetch(`${site}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: issued.json.access_token!, client_id: other.clientId }),
    });
    expect((await keysOf(c.clientId))[0]!.revokedAt).toBeNull();
    const res = await fetch(`${site}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: issued.json.access_token!, client_id: c.clientId }),
    });
    expect(res.status).toBe(200);
    expect((await keysOf(c.clientId))[0]!.revokedAt).not.toBeNull();
  });
});

describe('what is refused, with an OAuth error and nothing issued', () => {
  it('a missing or wrong PKCE verifier', async () => {
    const c = await approvedCode();
    const base = { grant_type: 'authorization_code', code: c.code, client_id: c.clientId, redirect_uri: REDIRECT };
    expect((await token(base)).json.error).toBe('invalid_request');
    const wrong = await token({ ...base, code_verifier: randomBytes(32).toString('base64url') });
    expect(wrong).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(await keysOf(c.clientId)).toEqual([]);
  });

  it('a redirect_uri that does not match, at /authorize (never redirected to) and at /token', async () => {
    const c = await registered();
    const { b } = await person();
    const elsewhere = await b.get(authorizePath(c.clientId, c.challenge, { redirect_uri: 'https://evil.example/cb' }));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.location).toBeNull();
    expect(JSON.parse(elsewhere.text).error).toBe('invalid_request');
    const d = await approvedCode();
    const res = await token({
      grant_type: 'authorization_code',
      code: d.code,
      code_verifier: d.verifier,
      client_id: d.clientId,
      redirect_uri: 'http://127.0.0.1:53682/other',
    });
    expect(res).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(await keysOf(d.clientId)).toEqual([]);
  });

  it('a redirect_uri left out at /token: PKCE binds the code, as OAuth 2.1 has it (docs/security.md)', async () => {
    const d = await approvedCode();
    const res = await token({
      grant_type: 'authorization_code',
      code: d.code,
      code_verifier: d.verifier,
      client_id: d.clientId,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(await keysOf(d.clientId)).toHaveLength(1);
  });

  it("a consent link opened in another person's browser: refused there, answerable only where it started", async () => {
    const c = await registered();
    const { b: starter } = await person();
    const started = await starter.get(authorizePath(c.clientId, c.challenge));
    expect(started.status).toBe(302);
    expect(started.headers.get('set-cookie')).toMatch(
      /shipyard_oauth_browser=[A-Za-z0-9_-]{43}; .*Path=\/; .*HttpOnly/,
    );
    const request = new URL(started.location!, site).searchParams.get('request')!;
    // The link sent to someone else, signed in to another account.
    const { b: victim } = await person();
    const shown = await victim.get(`/oauth/consent?request=${request}`);
    expect(shown.status).toBe(400);
    expect(shown.text).toContain('This sign-in request was started in another browser');
    expect(shown.text).not.toContain('Raw client');
    const answered = await victim.post('/oauth/consent', {
      _csrf: victim.csrf(),
      request,
      scopes: ['projects.read'],
      expiry: '7',
      decision: 'approve',
    });
    expect(answered.status).toBe(400);
    expect(answered.location).toBeNull();
    const grant = await t.db.orm.em.fork().findOneOrFail(OAuthGrant, { id: request });
    expect(grant.user).toBeNull();
    expect(grant.codeHash).toBeNull();
    // The browser that started it still may, and a second request it starts meanwhile (another
    // app, a retry) does not take the first one's place.
    const second = await starter.get(authorizePath(c.clientId, c.challenge, { state: 'st-2' }));
    const other = new URL(second.location!, site).searchParams.get('request')!;
    expect((await starter.get(`/oauth/consent?request=${other}`)).status).toBe(200);
    expect((await starter.get(`/oauth/consent?request=${request}`)).status).toBe(200);
    const code = (await approve(starter, request, ['projects.read'])).get('code');
    expect(code).toBeTruthy();
  });

  it('prompt=none: login_required or consent_required, not the consent page, never redirected, nothing recorded', async () => {
    const c = await registered();
    const stranger = new Browser(t.baseUrl);
    const out = await stranger.get(authorizePath(c.clientId, c.challenge, { prompt: 'none' }));
    expect(out.status).toBe(400);
    expect(out.location).toBeNull();
    expect(JSON.parse(out.text).error).toBe('login_required');
    const { b } = await person();
    const signedIn = await b.get(authorizePath(c.clientId, c.challenge, { prompt: 'none' }));
    expect(signedIn.status).toBe(400);
    expect(JSON.parse(signedIn.text).error).toBe('consent_required');
    expect(await grantsFor(c.clientId)).toBe(0);
  });

  it('a code used twice: the second is refused and the key the first gave is revoked', async () => {
    const c = await approvedCode();
    const form = {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
      redirect_uri: REDIRECT,
    };
    expect((await token(form)).status).toBe(200);
    expect(await token(form)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    const [key] = await keysOf(c.clientId);
    expect(key!.revokedAt).not.toBeNull();
    // And when the key it gave is gone already (its account deleted, say), a refusal all the same.
    const d = await approvedCode();
    const again = { ...form, code: d.code, code_verifier: d.verifier, client_id: d.clientId };
    expect((await token(again)).status).toBe(200);
    await t.db.orm.em.fork().nativeDelete(ApiKey, { oauthClientId: d.clientId });
    expect(await token(again)).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
  });

  it('an expired code', async () => {
    const c = await approvedCode();
    await t.db.orm.em
      .fork()
      .nativeUpdate(OAuthGrant, { clientId: c.clientId }, { codeExpiresAt: new Date(Date.now() - 1000) });
    const res = await token({
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
    });
    expect(res).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(await keysOf(c.clientId)).toEqual([]);
  });

  it('a code presented by another client', async () => {
    const c = await approvedCode();
    const other = await registered();
    const res = await token({
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: other.clientId,
    });
    expect(res).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(await keysOf(c.clientId)).toEqual([]);
  });

  it('an unknown client, and registrations that are not safe to send a code to', async () => {
    const { b } = await person();
    const unknown = await b.get(authorizePath('6b1f2c1e-1111-4222-8333-944455556666', 'x'.repeat(43)));
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text).error).toBe('invalid_client');
    for (const redirect_uris of [
      ['javascript:alert(1)'],
      ['ssh://evil.example/cb'],
      ['x-javascript://alert/1'],
      ['git://evil.example/cb'],
      ['http://evil.example/cb'],
      [`https://a.example/${'x'.repeat(2100)}`],
      [],
    ]) {
      const res = await fetch(`${site}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Bad', redirect_uris }),
      });
      expect(res.status, JSON.stringify(redirect_uris).slice(0, 80)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    }
    // A confidential registration is made public: no secret is ever issued or kept.
    const res = await fetch(`${site}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Wants a secret',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_post',
      }),
    });
    const registeredClient = (await res.json()) as Record<string, unknown>;
    expect(registeredClient.token_endpoint_auth_method).toBe('none');
    expect(registeredClient.client_secret).toBeUndefined();
  });

  it('scopes beyond the nine, a foreign resource, and any other refused request: a 400, never redirected', async () => {
    const c = await registered();
    const { b } = await person();
    for (const [extra, error] of [
      [{ scope: 'projects.read admin' }, 'invalid_scope'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'é'.repeat(43) }, 'invalid_request'],
      [{ response_type: 'token' }, 'invalid_request'],
      [{ state: 'x'.repeat(1001) }, 'invalid_request'],
      [{ state: 'a\u0000b' }, 'invalid_request'],
      [{ scope: 'projects.read\ud800' }, 'invalid_scope'],
    ] as const) {
      const res = await b.get(authorizePath(c.clientId, c.challenge, extra));
      expect(res.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
      expect(res.location).toBeNull();
      expect(JSON.parse(res.text).error).toBe(error);
    }
    expect(await grantsFor(c.clientId)).toBe(0);
    // A code for this server presented for another resource at /token.
    const d = await approvedCode();
    const res = await token({
      grant_type: 'authorization_code',
      code: d.code,
      code_verifier: d.verifier,
      client_id: d.clientId,
      resource: 'https://other.example/mcp',
    });
    expect(res).toMatchObject({ status: 400, json: { error: 'invalid_target' } });
    expect(await keysOf(d.clientId)).toEqual([]);
  });

  it('a code presented twice at the same moment: one key, and it is revoked', async () => {
    const c = await approvedCode();
    const form = {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
      redirect_uri: REDIRECT,
    };
    const answers = await Promise.all([token(form), token(form)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const keys = await keysOf(c.clientId);
    expect(keys).toHaveLength(1);
    expect(keys[0]!.revokedAt).not.toBeNull();
  });

  it('a verifier that is not a PKCE verifier, and a code after a wrong verifier', async () => {
    const c = await approvedCode();
    const base = { grant_type: 'authorization_code', code: c.code, client_id: c.clientId };
    expect(await token({ ...base, code_verifier: 'a' })).toMatchObject({
      status: 400,
      json: { error: 'invalid_request' },
    });
    expect(await token({ ...base, code_verifier: 'b'.repeat(43) })).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    });
    // A wrong verifier uses the code up: the right one comes too late.
    expect(await token({ ...base, code_verifier: c.verifier })).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    });
    expect(await keysOf(c.clientId)).toEqual([]);
  });

  it('bodies the endpoints cannot read, and registrations with unstorable or unsafe values', async () => {
    const broken = await fetch(`${site}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"redirect_uris": [',
    });
    expect(broken.status).toBe(400);
    expect(broken.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await broken.json()) as { error: string }).error).toBe('invalid_request');
    for (const body of [
      { client_name: 'a\u0000b', redirect_uris: [REDIRECT] },
      { client_name: 'x', redirect_uris: ['https://a.example/\u0000'] },
      { client_name: 'x', redirect_uris: ['view-source:https://evil.example/'] },
      { client_name: 'x', redirect_uris: ['mailto:eve@evil.example'] },
      { client_name: 'x', redirect_uris: ['https:evil.example/cb'] },
      { client_name: 'x', redirect_uris: ['https://user:pw@a.example/cb'] },
    ]) {
      const res = await fetch(`${site}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    }
    // An app's own scheme: a reverse domain name (RFC 8252 §7.1), or a known editor's.
    for (const uri of ['cursor://anysphere.cursor-retrieval/oauth/callback', 'com.example.mill://oauth/callback']) {
      const app = await fetch(`${site}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'An app', redirect_uris: [uri] }),
      });
      expect(app.status, uri).toBe(201);
    }
  });

  it('a consent POST without a valid CSRF token, and a signed-out one', async () => {
    const c = await registered();
    const { b } = await person();
    const { request } = await openConsent(b, new URL(authorizePath(c.clientId, c.challenge), site));
    const forged = await b.post('/oauth/consent', {
      _csrf: 'forged',
      request,
      scopes: ['projects.read'],
      expiry: '7',
      decision: 'approve',
    });
    expect(forged.status).toBe(403);
    const stranger = new Browser(t.baseUrl);
    await stranger.get('/signin');
    const signedOut = await stranger.post('/oauth/consent', {
      _csrf: stranger.csrf(),
      request,
      scopes: ['projects.read'],
      expiry: '7',
      decision: 'approve',
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toMatch(/^\/signin\?next=/);
    const [grant] = await t.db.orm.em.fork().find(OAuthGrant, { clientId: c.clientId });
    expect(grant!.codeHash).toBeNull();
    expect(grant!.user).toBeNull();
  });

  it('a denied consent: access_denied to the client, and the request gone', async () => {
    const c = await registered();
    const { b } = await person();
    const { request } = await openConsent(b, new URL(authorizePath(c.clientId, c.challenge), site));
    const undecided = await b.post('/oauth/consent', {
      _csrf: b.csrf(),
      request,
      scopes: ['projects.read'],
      expiry: '7',
    });
    expect(undecided.status).toBe(400);
    const denied = await b.post('/oauth/consent', { _csrf: b.csrf(), request, decision: 'deny' });
    expect(denied.status).toBe(303);
    const to = new URL(denied.location!);
    expect(to.searchParams.get('error')).toBe('access_denied');
    expect(to.searchParams.get('state')).toBe('st-1');
    expect(to.searchParams.get('code')).toBeNull();
    expect(await grantsFor(c.clientId)).toBe(0);
    expect((await b.get(`/oauth/consent?request=${request}`)).status).toBe(400);
  });

  it('an approval with no scope ticked, or one the client did not ask for', async () => {
    const c = await registered();
    const { b } = await person();
    const { request } = await openConsent(b, new URL(authorizePath(c.clientId, c.challenge), site));
    for (const scopes of [[], ['radar.read']]) {
      const res = await b.post('/oauth/consent', {
        _csrf: b.csrf(),
        request,
        scopes,
        expiry: '7',
        decision: 'approve',
      });
      expect(res.status).toBe(400);
      expect(res.text).toContain('class="errors"');
    }
    const [grant] = await t.db.orm.em.fork().find(OAuthGrant, { clientId: c.clientId });
    expect(grant!.codeHash).toBeNull();
  });

  it('a refresh token grant: none is issued, and asking is refused', async () => {
    const c = await registered();
    const res = await token({ grant_type: 'refresh_token', refresh_token: 'anything', client_id: c.clientId });
    expect(res).toMatchObject({ status: 400, json: { error: 'unsupported_grant_type' } });
    expect(res.json.error_description).toMatch(/authorization_code only, and issues no refresh tokens/);
  });
});

describe('housekeeping', () => {
  it('removes grants after a day, and registrations nobody approved within a day or used for 90 days', async () => {
    const used = await approvedCode();
    const issued = await token({
      grant_type: 'authorization_code',
      code: used.code,
      code_verifier: used.verifier,
      client_id: used.clientId,
    });
    expect(issued.status).toBe(200);
    const unused = await registered();
    const em = t.db.orm.em.fork();
    await em.nativeUpdate(
      OAuthGrant,
      { clientId: used.clientId },
      { createdAt: new Date(Date.now() - 25 * 3_600_000) },
    );
    await em.nativeUpdate(OAuthClient, { id: unused.clientId }, { createdAt: new Date(Date.now() - 25 * 3_600_000) });
    expect(await sweepOAuth(em)).toBeGreaterThanOrEqual(2);
    expect(await grantsFor(used.clientId)).toBe(0);
    const client = (id: string) => t.db.orm.em.fork().findOne(OAuthClient, { id });
    expect(await client(unused.clientId)).toBeNull();
    expect(await client(used.clientId)).not.toBeNull();
    // Idle for 90 days: kept while a key it was given works (it may still revoke it), then removed.
    await token({
      grant_type: 'authorization_code',
      code: used.code,
      code_verifier: used.verifier,
      client_id: used.clientId,
    });
    await em.nativeUpdate(OAuthClient, { id: used.clientId }, { lastUsedAt: new Date(Date.now() - 91 * 86_400_000) });
    await sweepOAuth(em);
    expect(await client(used.clientId)).not.toBeNull();
    await em.nativeUpdate(ApiKey, { oauthClientId: used.clientId }, { revokedAt: new Date() });
    await sweepOAuth(em);
    expect(await client(used.clientId)).toBeNull();
  });
});

describe('malformed requests, answered in a sentence', () => {
  it('names what is missing instead of a schema dump', async () => {
    const post = async (path: string, type: string, body: string) => {
      const res = await fetch(`${site}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
      return { status: res.status, json: (await res.json()) as { error: string; error_description: string } };
    };
    expect(await post('/register', 'application/json', '{}')).toEqual({
      status: 400,
      json: {
        error: 'invalid_client_metadata',
        error_description: 'redirect_uris is required: a list of 1 to 10 URIs.',
      },
    });
    expect(
      (await post('/register', 'application/x-www-form-urlencoded', 'redirect_uris=x')).json.error_description,
    ).toBe('Send the registration as a JSON object (application/json).');
    expect((await post('/token', 'application/json', '{"grant_type":"authorization_code"}')).json).toEqual({
      error: 'invalid_request',
      error_description: 'Send the token request as application/x-www-form-urlencoded.',
    });
    const noVerifier = await post(
      '/token',
      'application/x-www-form-urlencoded',
      'grant_type=authorization_code&client_id=x&code=y',
    );
    expect(noVerifier.json.error_description).toBe(
      'code_verifier is required: the PKCE verifier whose SHA-256 was the code_challenge.',
    );
  });
});
