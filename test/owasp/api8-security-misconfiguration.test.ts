/** OWASP API8:2023 Security Misconfiguration — headers, CORS, errors that tell nothing internal. */
import { describe, expect, it } from 'vitest';
import { raw, uniqueName, useServer } from '../harness.js';
import { Project } from '../../src/projects/project.entity.js';
import { connect } from 'node:net';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

describe('API8 security misconfiguration', () => {
  it('sends hardening headers and no server banner', async () => {
    const res = await fetch(`${t.apiUrl}/users/me`, { headers: { authorization: `Bearer ${ada.token}` } });
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('allows cross-origin calls only without credentials', async () => {
    const res = await fetch(`${t.apiUrl}/users/me`, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${ada.token}` },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('answers every path under /api/ with problem+json, and matches paths whatever their case, the base path too', async () => {
    for (const path of [
      '//api/v1/projects',
      '/api//v1/projects',
      '/api',
      '/API',
      '/api/v2/projects',
      '/Api/v1/nowhere',
    ]) {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(`${t.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${ada.token}`, 'content-type': 'application/json' },
          body: method === 'POST' ? '{"name":"x"}' : undefined,
        });
        const what = `${method} ${path}`;
        expect(res.status, what).toBe(404);
        expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
        expect((await res.json()).detail, what).toMatch(/^There is no/);
      }
    }
    // One case policy: the base path is matched as the rest of the path always was.
    for (const path of ['/API/v1/projects', '/api/V1/Projects', '/Api/V1/users/me']) {
      const res = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${ada.token}` } });
      expect(res.status, path).toBe(200);
    }
    const created = await fetch(`${t.baseUrl}/API/V1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ada.token}`, 'content-type': 'application/json' },
      body: '{"name":"Shouted"}',
    });
    expect(created.status).toBe(201);
    // The web application keeps its own 404 page for its own paths.
    const page = await fetch(`${t.baseUrl}/no-such-page`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
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

  it('reads JSON one way only: duplicate keys, bad UTF-8, lone surrogates and other charsets are refused, storing nothing', async () => {
    const name = uniqueName('Parse');
    const send = (body: string | Uint8Array<ArrayBuffer>, contentType = 'application/json') =>
      fetch(`${t.apiUrl}/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ada.token}`, 'content-type': contentType },
        body,
      });
    const cases: [string, Response, number, RegExp][] = [
      [
        'duplicate key',
        await send(`{"name":"${name}","visibility":"private","visibility":"public"}`),
        400,
        /"visibility" appears twice/,
      ],
      ['duplicate key, escaped', await send(`{"name":"${name}","\\u006eame":"other"}`), 400, /"name" appears twice/],
      [
        'invalid UTF-8',
        await send(
          new Uint8Array(
            Buffer.concat([Buffer.from(`{"name":"${name}`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
          ),
        ),
        400,
        /not valid UTF-8/,
      ],
      ['lone surrogate', await send(`{"name":"${name}\\ud800"}`), 400, /lone surrogate .* at \/name/],
      [
        'UTF-16',
        await send(new Uint8Array(Buffer.from(`{"name":"${name}"}`, 'utf16le')), 'application/json; charset=utf-16le'),
        415,
        /UTF-8 only/,
      ],
      ['latin-1', await send(`{"name":"${name}"}`, 'application/json; charset=iso-8859-1'), 415, /UTF-8 only/],
    ];
    for (const [what, res, status, detail] of cases) {
      expect(res.status, what).toBe(status);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
      expect((await res.json()).detail, what).toMatch(detail);
    }
    expect(await t.db.orm.em.fork().count(Project, { name: { $like: `${name}%` } })).toBe(0);
    // An empty body where a JSON one is required: 400, never a 500 (on every PATCH that takes one).
    const project = (await raw(t, 'POST', '/projects', { token: ada.token, body: { name: `${name}-empty` } })).json;
    const empty = await fetch(`${t.apiUrl}/projects/${project.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ada.token}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(empty.status).toBe(400);
    expect((await empty.json()).detail).toMatch(/body is empty/);
    // Declared UTF-8, in any spelling, is read as before.
    expect((await send(`{"name":"${name}"}`, 'application/json; charset=UTF-8')).status).toBe(201);
  });

  it("answers what Node's HTTP parser refuses (raw non-ASCII in the request line) with problem+json too", async () => {
    const { port } = new URL(t.apiUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.write(
      Buffer.concat([
        Buffer.from('GET /api/v1/projects?limit='),
        Buffer.from('٥', 'utf8'),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
    );
    await new Promise((r) => socket.on('close', r));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/Content-Type: application\/problem\+json/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toMatchObject({
      status: 400,
      type: '/problems/malformed-request',
    });
    // An HTTP/1.1 request without a Host header: Node's own check would answer a bare 400.
    const bare = connect(Number(port), '127.0.0.1');
    await new Promise<void>((r) => bare.once('connect', () => r()));
    let reply = '';
    bare.on('data', (d) => (reply += d));
    bare.write('GET /api/v1/users/me HTTP/1.1\r\nConnection: close\r\n\r\n');
    await new Promise((r) => bare.on('close', r));
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toMatch(/Content-Type: application\/problem\+json/i);
    expect(reply).toContain('needs a Host header');
  });
});
