/** OWASP API4:2023 Unrestricted Resource Consumption — every bound holds, with a clear 4xx. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, fileForm, UPLOAD_MAX_BYTES, type TestServer, type TestUser } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import { png } from '../fixtures/images.js';

let t: TestServer;
let ada: TestUser;
beforeAll(async () => {
  t = await startServer();
  ada = await userWithKey(t);
});
afterAll(async () => {
  await t?.close();
});

describe('API4 resource consumption', () => {
  it('caps page sizes, bodies, uploads, lists inside bodies, text lengths and thread depth', async () => {
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b' } })).data!;
    const cases: [string, Promise<{ status: number }>, number][] = [
      ['limit', raw(t, 'GET', '/projects?limit=100000', { token: ada.token }), 400],
      ['search length', raw(t, 'GET', `/search?q=${'a'.repeat(300)}`, { token: ada.token }), 400],
      ['body size', raw(t, 'POST', '/posts', { token: ada.token, body: { title: 't', body: 'x'.repeat(1_100_000) } }), 413],
      ['markdown bound', raw(t, 'POST', '/posts', { token: ada.token, body: { title: 't', body: 'x'.repeat(100_001) } }), 400],
      ['too many tags', raw(t, 'POST', '/posts', { token: ada.token, body: { title: 't', body: 'b', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } }), 400],
      ['reorder list', raw(t, 'POST', `/projects/${post.id}/milestones/reorder`, { token: ada.token, body: { milestoneIds: Array.from({ length: 1001 }, () => post.id) } }), 400],
      ['upload size', raw(t, 'POST', '/media', { token: ada.token, body: fileForm(Buffer.concat([png(2, 2), Buffer.alloc(UPLOAD_MAX_BYTES)])) }), 413],
    ];
    for (const [what, res, status] of cases) expect((await res).status, what).toBe(status);
  });

  it('takes only integers written in digits as integers in a query: 400 for Infinity, 1e400, 1e2 or hex on every list', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: 'limits' } })).data!;
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b' } })).data!;
    const lists = ['/projects', '/posts', '/jobs', '/search?q=limits&', `/projects/${project.id}/milestones`, `/projects/${project.id}/members`,
      `/projects/${project.id}/build-logs`, `/posts/${post.id}/comments`, `/users/${ada.user.username}/projects`, `/users/${ada.user.username}/posts`, '/radar'];
    for (const list of lists) {
      for (const limit of ['Infinity', '-Infinity', '1e400', '1e2', '0x10', '1.0', '+5', ' 5']) {
        const res = await raw(t, 'GET', `${list}${list.endsWith('&') ? '' : '?'}limit=${encodeURIComponent(limit)}`, { token: ada.token });
        expect(res.status, `${list} limit=${limit}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.json.errors).toEqual([{ path: '/query/limit', message: 'must be an integer written in digits' }]);
      }
      expect((await raw(t, 'GET', `${list}${list.endsWith('&') ? '' : '?'}limit=5`, { token: ada.token })).status, list).toBe(200);
    }
  });

  it('spends a per-key budget (429) before a client can exhaust the service', async () => {
    const own = await startServer({ rateLimitPerMinute: 3 });
    try {
      const u = await userWithKey(own, ['content.read']);
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await raw(own, 'GET', '/platform/versions', { token: u.token })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await own.close();
    }
  });

  it('answers a request that runs past the deadline with 503 problem+json instead of holding the client', async () => {
    const own = await startServer({ requestTimeoutMs: 0 });
    try {
      const u = await userWithKey(own, ['content.read']);
      const res = await raw(own, 'GET', '/search?q=anything', { token: u.token });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json.type).toBe('https://shipyard.dev/problems/timeout');
    } finally {
      await own.close();
    }
  });
});
