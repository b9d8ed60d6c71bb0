import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, type TestServer, useServer } from './harness.js';
import { parseTrustProxy } from '../src/config.js';

const { t } = useServer({ rateLimitPerMinute: 5, failedAuthPerMinute: 3 });

describe('rate limits', () => {
  it('gives each key its own budget, in RateLimit headers, then 429 with Retry-After', async () => {
    const ada = await userWithKey(t, ['profile.read', 'projects.read']);
    const first = await raw(t, 'GET', '/users/me', { token: ada.token });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toMatch(
      /^"per-key"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:, "per-user"; q=10; w=60; pk=:[A-Za-z0-9+/=]+:$/,
    );
    expect(first.headers.get('ratelimit')).toMatch(/^"per-key"; r=4; t=\d+, "per-user"; r=9; t=\d+$/);
    expect(first.headers.get('shipyard-key-expiration')).toMatch(/^\d{4}-\d\d-\d\dT/);
    for (let i = 0; i < 4; i++) expect((await raw(t, 'GET', '/users/me', { token: ada.token })).status).toBe(200);
    const over = await raw(t, 'GET', '/projects', { token: ada.token });
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.json).toMatchObject({ type: '/problems/rate-limited', status: 429 });

    // The MCP endpoint spends the same budget, and refuses each request as JSON-RPC (an MCP
    // client hands the agent the error instead of failing on an HTTP 429).
    const mcp = await fetch(`${t.apiUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ada.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(200);
    expect(await mcp.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32000,
        message: expect.stringMatching(/^Rate limit reached: .*retry in \d+ seconds/),
        data: { status: 429 },
      },
    });
    expect(mcp.headers.get('ratelimit')).toMatch(/r=0/);

    const grace = await userWithKey(t, ['profile.read']);
    expect((await raw(t, 'GET', '/users/me', { token: grace.token })).status).toBe(200);
  });

  it('never counts legitimate requests in flight against the failed-auth budget', async () => {
    // 12 requests at once from one address, over the failed-auth budget of 3: none was refused
    // for its key, so none may meet that limiter.
    const users = await Promise.all([0, 1, 2].map(() => userWithKey(t, ['profile.read'])));
    const answers = await Promise.all(
      users.flatMap((u) => [0, 1, 2, 3].map(() => raw(t, 'GET', '/users/me', { token: u.token }))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
  });

  it('slows down guessing keys from one address', async () => {
    for (let i = 0; i < 3; i++)
      expect((await raw(t, 'GET', '/users/me', { token: 'shipyard_pat_guess' })).status).toBe(401);
    const blocked = await raw(t, 'GET', '/users/me', { token: 'shipyard_pat_guess' });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(50);
    // Without TRUST_PROXY nobody's X-Forwarded-For counts: naming another address does not escape.
    const spoofed = await raw(t, 'GET', '/users/me', {
      token: 'shipyard_pat_guess',
      headers: { 'x-forwarded-for': '198.51.100.7' },
    });
    expect(spoofed.status).toBe(429);
  });
});

describe('behind a reverse proxy (TRUST_PROXY)', () => {
  let p: TestServer;
  beforeAll(async () => {
    // The tests connect from 127.0.0.1: the loopback proxy, whose X-Forwarded-For names the client.
    p = await startServer({ failedAuthPerMinute: 3, trustProxy: ['loopback'] });
  });
  afterAll(async () => {
    await p?.close();
  });
  const from = (client: string, token: string) =>
    raw(p, 'GET', '/users/me', { token, headers: { 'x-forwarded-for': client } });

  it('spends the failed-key budget of the client the proxy names, not one budget for everyone behind it', async () => {
    for (let i = 0; i < 3; i++) expect((await from('203.0.113.5', 'shipyard_pat_guess')).status).toBe(401);
    expect((await from('203.0.113.5', 'shipyard_pat_guess')).status).toBe(429);
    // Another client behind the same proxy keeps its own budget, for a good key and a bad one.
    const ada = await userWithKey(p, ['profile.read']);
    expect((await from('203.0.113.6', ada.token)).status).toBe(200);
    expect((await from('203.0.113.6', 'shipyard_pat_guess')).status).toBe(401);
    // The proxy appends the address it saw: a client's own X-Forwarded-For entry is not believed.
    expect((await from('203.0.113.9, 203.0.113.5', 'shipyard_pat_guess')).status).toBe(429);
  });

  it('takes a number of proxies or their addresses, and refuses to trust every address', () => {
    expect(parseTrustProxy(undefined)).toBeUndefined();
    expect(parseTrustProxy('')).toBeUndefined();
    expect(parseTrustProxy('0')).toBeUndefined();
    expect(parseTrustProxy('false')).toBeUndefined();
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback, 10.0.0.0/8, fd00::/8, 192.0.2.1')).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.1',
    ]);
    expect(() => parseTrustProxy('true')).toThrow(/may not trust every address/);
    expect(() => parseTrustProxy('*')).toThrow(/may not trust every address/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(/'10.0.0.0\/33', which is not an address/);
    expect(() => parseTrustProxy('proxy.internal')).toThrow(/TRUST_PROXY names 'proxy.internal'/);
    expect(() => parseTrustProxy('10.0.0.1,')).toThrow(/names ''/);
  });
});
