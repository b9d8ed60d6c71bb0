/** OWASP API8:2023 Security Misconfiguration — headers, CORS, errors that tell nothing internal. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, type TestServer, type TestUser } from '../harness.js';

let t: TestServer;
let ada: TestUser;
beforeAll(async () => {
  t = await startServer();
  ada = await userWithKey(t);
});
afterAll(async () => {
  await t?.close();
});

describe('API8 security misconfiguration', () => {
  it('sends hardening headers and no server banner', async () => {
    const res = await fetch(`${t.apiUrl}/users/me`, { headers: { authorization: `Bearer ${ada.token}` } });
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('allows cross-origin calls only without credentials', async () => {
    const res = await fetch(`${t.apiUrl}/users/me`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${ada.token}` } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('answers malformed input with problems that reveal no internals', async () => {
    const cases = [
      await raw(t, 'POST', '/projects', { token: ada.token, body: '{"name":' }),
      await raw(t, 'GET', '/projects/%E0%A4%A', { token: ada.token }),
      await raw(t, 'PUT', '/search', { token: ada.token, body: {} }),
      await raw(t, 'GET', '/projects?limit[$gt]=1', { token: ada.token }),
    ];
    for (const res of cases) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.text).not.toMatch(/node_modules|at [A-Za-z]+ \(|stack|SELECT|postgres/i);
    }
  });
});
