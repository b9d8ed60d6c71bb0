import { describe, expect, it } from 'vitest';
import { useServer } from './harness.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: ['profile.read'] } });

describe('security headers and CORS', () => {
  it('sends the security headers on every response', async () => {
    for (const path of ['/api/v1/users/me', '/api/v1/nowhere', '/healthz']) {
      const res = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${ada.token}` } });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });

  it('lets browsers call the API with a key, never with credentials', async () => {
    const pre = await fetch(`${t.apiUrl}/users/me`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    const res = await fetch(`${t.apiUrl}/users/me`, {
      headers: { origin: 'https://app.example', authorization: `Bearer ${ada.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/RateLimit/);
  });

  it('answers readiness from the database', async () => {
    const res = await fetch(`${t.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', database: 'ok', rateLimits: 'local' });
  });
});
