/** OWASP API4:2023 Unrestricted Resource Consumption — every bound holds, with a clear 4xx. */
import { describe, expect, it } from 'vitest';
import { startServer, userWithKey, keyFor, raw, fileForm, UPLOAD_MAX_BYTES, useServer } from '../harness.js';
import { createKey } from '../../src/keys/keys.service.js';
import { ApiKey } from '../../src/keys/api-key.entity.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import {
  gif1x1,
  gifFrames,
  gifScreen,
  gifScriptPolyglot,
  jpeg1x1,
  png,
  pngDeclaring,
  zeroPng,
  pngInflatingTo,
  pngWithDataInIend,
  webp1x1,
  webpWithChunk,
} from '../fixtures/images.js';
import { Media } from '../../src/media/media.entity.js';
import { FREE_OPENINGS_PER_WINDOW } from '../../src/http/rate-limit.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

describe('API4 resource consumption', () => {
  it('caps page sizes, bodies, uploads, lists inside bodies, text lengths and thread depth', async () => {
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b' } })).data!;
    const cases: [string, Promise<{ status: number }>, number][] = [
      ['limit', raw(t, 'GET', '/projects?limit=100000', { token: ada.token }), 400],
      ['search length', raw(t, 'GET', `/search?q=${'a'.repeat(300)}`, { token: ada.token }), 400],
      [
        'body size',
        raw(t, 'POST', '/posts', { token: ada.token, body: { title: 't', body: 'x'.repeat(1_100_000) } }),
        413,
      ],
      [
        'markdown bound',
        raw(t, 'POST', '/posts', { token: ada.token, body: { title: 't', body: 'x'.repeat(100_001) } }),
        400,
      ],
      [
        'too many tags',
        raw(t, 'POST', '/posts', {
          token: ada.token,
          body: { title: 't', body: 'b', tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
        }),
        400,
      ],
      [
        'reorder list',
        raw(t, 'POST', `/projects/${post.id}/milestones/reorder`, {
          token: ada.token,
          body: { milestoneIds: Array.from({ length: 1001 }, () => post.id) },
        }),
        400,
      ],
      [
        'upload size',
        raw(t, 'POST', '/media', {
          token: ada.token,
          body: fileForm(Buffer.concat([png(2, 2), Buffer.alloc(UPLOAD_MAX_BYTES)])),
        }),
        413,
      ],
    ];
    for (const [what, res, status] of cases) expect((await res).status, what).toBe(status);
  });

  it('refuses decompression bombs and files that only start like an image, storing nothing', async () => {
    const count = () => t.db.orm.em.fork().count(Media, {});
    const before = await count();
    const cases: [string, Buffer, number, RegExp][] = [
      [
        '100000×100000 declared in a few bytes',
        pngDeclaring(100_000, 100_000),
        422,
        /declares 100000×100000 pixels; the most accepted is 25 megapixels/,
      ],
      ['2³¹−1 square', pngDeclaring(2 ** 31 - 1, 2 ** 31 - 1), 422, /the most accepted is 25 megapixels/],
      [
        'the attack: 6324×6324 real pixels of zeros in 39 KB',
        zeroPng(6324, 6324),
        422,
        /declares 6324×6324 pixels; the most accepted is 25 megapixels/,
      ],
      ['a header that promises more than its data', pngDeclaring(1000, 1000), 415, /does not decode as one/],
      ['a GIF that goes on as JavaScript', gifScriptPolyglot, 415, /not only a GIF image/],
      [
        'a PNG with a page after its end',
        Buffer.concat([png(4, 4), Buffer.from('<html><script>alert(1)</script></html>')]),
        415,
        /not only a PNG image/,
      ],
      [
        'a JPEG with a script after its end',
        Buffer.concat([jpeg1x1, Buffer.from('<script>alert(1)</script>')]),
        415,
        /not only a JPEG image/,
      ],
      ['a PNG cut short', png(16, 16).subarray(0, 60), 415, /not only a PNG image/],
      ['a GIF of 1001 frames', gifFrames(1001), 422, /1001 frames; the most accepted is 1000/],
      ['a GIF of 1000 frames of 201×201', gifScreen(201, 1000), 422, /more than 25 megapixels in all its frames/],
      [
        'a page hidden in a PNG end marker',
        pngWithDataInIend(Buffer.from('<html><script>alert(1)</script></html>')),
        415,
        /not only a PNG image/,
      ],
      [
        'a WebP with a chunk WebP does not define',
        webpWithChunk('HTML', Buffer.from('<script>alert(1)</script>')),
        415,
        /not only a WEBP image/,
      ],
      [
        'an 8×8 PNG whose data inflates to 20 MB',
        pngInflatingTo(20_000_000),
        415,
        /more compressed data than its pixels need/,
      ],
    ];
    for (const [what, bytes, status, detail] of cases) {
      const res = await raw(t, 'POST', '/media', { token: ada.token, body: fileForm(bytes) });
      expect(res.status, what).toBe(status);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
      expect(res.json.detail, what).toMatch(detail);
    }
    expect(await count()).toBe(before);
    // What the checks take apart is each format's own structure: every real image still passes.
    for (const bytes of [png(3, 3), jpeg1x1, gif1x1, webp1x1, gifFrames(3)]) {
      expect((await raw(t, 'POST', '/media', { token: ada.token, body: fileForm(bytes) })).status).toBe(201);
    }
  });

  it('reads a body only once its key is known, charges a malformed one, and refuses one nested too deep', async () => {
    const own = await startServer({ rateLimitPerMinute: 2, failedAuthPerMinute: 2 });
    try {
      const u = await userWithKey(own, ['projects.write']);
      const send = (body: string, token?: string) => raw(own, 'POST', '/projects', { token, body });
      expect((await send('{"name":', u.token)).status).toBe(400);
      expect((await send('['.repeat(40) + ']'.repeat(40), u.token)).json.detail).toMatch(/deeper than 32 levels/);
      expect((await send('{"name":"x"}', u.token)).status).toBe(429); // two malformed bodies spent the budget
      // Without a valid key the body is never read: a failed authentication, counted as such.
      const bad = [await send('{"name":'), await send('{"name":'), await send('{"name":')];
      expect(bad.map((r) => r.status)).toEqual([401, 401, 429]);
    } finally {
      await own.close();
    }
  });

  it('takes only integers written in digits as integers in a query: 400 for Infinity, 1e400, 1e2 or hex on every list', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: 'limits' } })).data!;
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b' } })).data!;
    const lists = [
      '/projects',
      '/posts',
      '/jobs',
      '/search?q=limits&',
      `/projects/${project.id}/milestones`,
      `/projects/${project.id}/members`,
      `/projects/${project.id}/build-logs`,
      `/posts/${post.id}/comments`,
      `/users/${ada.user.username}/projects`,
      `/users/${ada.user.username}/posts`,
      '/radar',
    ];
    for (const list of lists) {
      for (const limit of ['Infinity', '-Infinity', '1e400', '1e2', '0x10', '1.0', '+5', ' 5']) {
        const res = await raw(t, 'GET', `${list}${list.endsWith('&') ? '' : '?'}limit=${encodeURIComponent(limit)}`, {
          token: ada.token,
        });
        expect(res.status, `${list} limit=${limit}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.json.errors).toEqual([{ path: '/query/limit', message: 'must be an integer written in digits' }]);
      }
      expect(
        (await raw(t, 'GET', `${list}${list.endsWith('&') ? '' : '?'}limit=5`, { token: ada.token })).status,
        list,
      ).toBe(200);
    }
  });

  it('keeps each account within its storage quota, and removes uploads no post ever showed after the grace', async () => {
    const own = await startServer({ mediaQuotaBytes: 3 * 40_000 });
    try {
      const u = await userWithKey(own, ['content.read', 'content.write']);
      expect((await raw(own, 'GET', '/platform/limits', { token: u.token })).json).toMatchObject({
        storageBytesPerUser: 120_000,
        unattachedUploadHours: 24,
      });
      const sizes: number[] = [];
      let refused: Awaited<ReturnType<typeof raw>> | undefined;
      // About 33 KB each, each a different size so that none is the same bytes as another: the fourth does not fit.
      for (let i = 0; i < 10 && !refused; i++) {
        const res = await raw(own, 'POST', '/media', { token: u.token, body: fileForm(png(120 + i, 100)) });
        if (res.status === 201) sizes.push(res.json.byteSize);
        else refused = res;
      }
      expect(refused?.status).toBe(422);
      expect(refused?.json.type).toBe('/problems/storage-quota-exceeded');
      expect(refused?.json.detail).toMatch(/of the 120000 an account may keep/);
      const stored = await own.db.orm.em.fork().find(Media, { uploader: u.user.id });
      expect(stored.map((m) => m.byteSize).sort()).toEqual([...sizes].sort());
      expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(120_000);

      // One is shown by a post; the others never were. After the grace, those go, bytes and all.
      const [shown, ...loose] = stored;
      await api.createPost({ client: u.client, body: { title: 'shown', body: 'b', mediaIds: [shown!.id] } });
      const { sweepUnattachedMedia } = await import('../../src/media/media.service.js');
      await sweepUnattachedMedia(own.db.orm.em.fork(), own.storage, new Date(Date.now() - 3_600_000));
      // Within the grace, nothing of this account's goes.
      expect(await own.db.orm.em.fork().count(Media, { uploader: u.user.id })).toBe(stored.length);
      // Every upload of this database is swept (on PostgreSQL, other test files' too): at least these.
      expect(
        await sweepUnattachedMedia(own.db.orm.em.fork(), own.storage, new Date(Date.now() + 1000)),
      ).toBeGreaterThanOrEqual(loose.length);
      for (const m of loose) {
        expect((await raw(own, 'GET', `/media/${m.id}`, { token: u.token })).status).toBe(404);
        expect(await own.storage.open(m.sha256)).toBeUndefined();
      }
      expect((await raw(own, 'GET', `/media/${shown!.id}/content`, { token: u.token })).status).toBe(200);
      // The room they took is free again.
      expect((await raw(own, 'POST', '/media', { token: u.token, body: fileForm(png(150, 100)) })).status).toBe(201);
    } finally {
      await own.close();
    }
  });

  it('charges an upload and a search by what they cost, as the contract and /platform/limits say', async () => {
    const own = await startServer({ rateLimitPerMinute: 50 });
    try {
      const u = await userWithKey(own, ['content.read', 'content.write']);
      const limits = (await raw(own, 'GET', '/platform/limits', { token: u.token })).json;
      expect(limits.requestCosts).toEqual({ default: 1, operations: { search: 5, uploadMedia: 20 } });
      const upload = () => raw(own, 'POST', '/media', { token: u.token, body: fileForm(png(2, 2)) });
      const first = await upload();
      expect(first.status).toBe(201);
      expect(first.headers.get('ratelimit-policy')).toMatch(/^"per-key"; q=50; w=60; pk=:[^:]+:; cost=20, "per-user"/);
      expect(first.headers.get('ratelimit')).toMatch(/^"per-key"; r=29;/); // 50 - 1 (the limits read) - 20
      expect((await upload()).status).toBe(201); // 9 left
      const third = await upload();
      expect(third.status).toBe(429);
      expect(third.json.detail).toMatch(/more than 50 requests in a minute/);
      const search = await raw(own, 'GET', '/search?q=gears', { token: u.token });
      expect(search.status).toBe(200);
      expect(search.headers.get('ratelimit')).toMatch(/^"per-key"; r=4;/);
      // A read still costs one: the budget a refused upload did not spend is there for it.
      const read = await raw(own, 'GET', '/platform/versions', { token: u.token });
      expect(read.headers.get('ratelimit-policy')).not.toMatch(/cost=/);
      expect(read.headers.get('ratelimit')).toMatch(/^"per-key"; r=3;/);
    } finally {
      await own.close();
    }
  });

  it('gives back what an upload refused as busy (503) spent: a refusal the client did not cause costs nothing', async () => {
    const own = await startServer({ rateLimitPerMinute: 200 });
    try {
      const u = await userWithKey(own, ['content.read', 'content.write']);
      let made = 0;
      let busy = 0;
      // Uploads sent at once by one account: one decodes, the others are told to come back.
      for (let round = 0; round < 3 && busy === 0; round++) {
        const answers = await Promise.all(
          Array.from({ length: 3 }, (_, i) =>
            raw(own, 'POST', '/media', { token: u.token, body: fileForm(zeroPng(4000 + round * 3 + i, 4000)) }),
          ),
        );
        made += answers.filter((a) => a.status === 201).length;
        busy += answers.filter((a) => a.status === 503 && a.json.type.endsWith('/busy')).length;
      }
      expect(busy).toBeGreaterThan(0);
      await expect
        .poll(async () => (await raw(own, 'GET', '/platform/versions', { token: u.token })).headers.get('ratelimit'), {
          timeout: 5_000,
        })
        // Each made upload spent 20; each busy one nothing. The reads spend one each, this one too.
        .toMatch(new RegExp(`^"per-key"; r=${200 - 20 * made - 1};|^"per-key"; r=${200 - 20 * made - 2};`));
    } finally {
      await own.close();
    }
  });

  it('spends a per-key budget (429) before a client can exhaust the service', async () => {
    const own = await startServer({ rateLimitPerMinute: 3 });
    try {
      const u = await userWithKey(own, ['content.read']);
      const statuses = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await raw(own, 'GET', '/platform/versions', { token: u.token })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await own.close();
    }
  });

  it('spends one unit per JSON-RPC request of an MCP batch, and none for the notification that completes a connection', async () => {
    const own = await startServer({ rateLimitPerMinute: 5 });
    try {
      const u = await userWithKey(own, ['projects.read']);
      const post = (body: unknown, version = '2025-03-26') =>
        raw(own, 'POST', '/mcp', {
          token: u.token,
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': version },
          body,
        });
      const init = await post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      });
      expect(init.headers.get('ratelimit')).toMatch(/^"per-key"; r=4;/);
      const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(initialized.status).toBe(202);
      expect(initialized.headers.get('ratelimit')).toMatch(/^"per-key"; r=4;/);
      // Only that one notification is free: a batch of them costs a unit like any POST.
      const notes = await post([
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]);
      expect(notes.headers.get('ratelimit')).toMatch(/^"per-key"; r=3;/);
      const batch = (n: number) =>
        Array.from({ length: n }, (_, i) => ({
          jsonrpc: '2.0',
          id: i + 1,
          method: 'tools/call',
          params: { name: 'list_my_projects', arguments: {} },
        }));
      const two = await post(batch(2));
      expect(two.status).toBe(200);
      expect(two.headers.get('ratelimit')).toMatch(/^"per-key"; r=1;/);
      // A batch bigger than what is left is refused whole and costs nothing: 100 calls no longer cost
      // one unit. Each request gets a JSON-RPC error saying when to retry, which an MCP client hands
      // to the agent (a bare HTTP 429 would fail in the client library).
      const over = await post(batch(2));
      expect(over.status).toBe(200);
      expect(over.json).toEqual(
        [1, 2].map((id) => ({
          jsonrpc: '2.0',
          id,
          error: {
            code: -32000,
            message: expect.stringMatching(/^Rate limit reached: .*retry in \d+ seconds/),
            data: { status: 429, retryAfter: expect.any(Number) },
          },
        })),
      );
      expect(over.headers.get('ratelimit')).toMatch(/^"per-key"; r=1;/);
      // A malformed body costs its unit too (it is read only once the key is known), and once
      // the budget is spent, even the free notification is refused.
      expect((await post('{"jsonrpc":')).status).toBe(400);
      expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(429);
      // With nothing left, a malformed body is refused for the budget, not for its syntax, and a
      // large one is refused before it is read.
      const spent = await post('{"jsonrpc":');
      expect(spent.status).toBe(429);
      const large = await post(
        `{"jsonrpc": "2.0", "method": "notifications/x", "params": {"pad": "${'x'.repeat(70_000)}"`,
      );
      expect(large.status).toBe(429);
      expect(large.json.error.message).not.toMatch(/Parse error/);
    } finally {
      await own.close();
    }
  });

  it('frees only the small, well-formed notification that completes a connection', async () => {
    const own = await startServer({ rateLimitPerMinute: 10 });
    try {
      const u = await userWithKey(own, ['projects.read']);
      const post = (body: unknown) =>
        raw(own, 'POST', '/mcp', {
          token: u.token,
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
          body,
        });
      const left = (res: { headers: Headers }) =>
        Number(/"per-key"; r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
      expect(left(await post({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBe(10);
      const heavy = {
        jsonrpc: '2.0',
        method: 'notifications/initialized',
        params: { junk: Array.from({ length: 5000 }, () => 0) },
      };
      expect(left(await post(heavy))).toBe(9);
      expect(left(await post({ jsonrpc: '1.0', method: 'notifications/initialized', params: [1, 2] }))).toBe(8);
    } finally {
      await own.close();
    }
  });

  it('keeps free openings few: past its allowance a key pays for each notification, and a flood meets its budget', async () => {
    const own = await startServer({ rateLimitPerMinute: 40 });
    try {
      const u = await userWithKey(own, ['projects.read']);
      const open = () =>
        raw(own, 'POST', '/mcp', {
          token: u.token,
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
          body: { jsonrpc: '2.0', method: 'notifications/initialized' },
        });
      const left: number[] = [];
      const statuses = new Set<number>();
      for (let i = 0; i < FREE_OPENINGS_PER_WINDOW + 45; i++) {
        const res = await open();
        statuses.add(res.status);
        left.push(Number(/"per-key"; r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]));
      }
      expect(left.slice(0, FREE_OPENINGS_PER_WINDOW)).toEqual(Array(FREE_OPENINGS_PER_WINDOW).fill(40));
      expect(left.slice(FREE_OPENINGS_PER_WINDOW, FREE_OPENINGS_PER_WINDOW + 3)).toEqual([39, 38, 37]);
      expect(left.at(-1)).toBe(0);
      expect([...statuses].sort()).toEqual([202, 429]);
    } finally {
      await own.close();
    }
  });

  it('gives an account one budget however many keys it mints, and caps its active keys', async () => {
    const own = await startServer({ rateLimitPerMinute: 3 });
    try {
      const u = await userWithKey(own, ['content.read']);
      const tokens = [u.token, ...(await Promise.all([0, 1, 2].map(() => keyFor(own, u.user.id, ['content.read']))))];
      const statuses: number[] = [];
      // The first key runs past its own budget: its refused requests cost the account nothing.
      for (let i = 0; i < 5; i++)
        statuses.push((await raw(own, 'GET', '/platform/versions', { token: tokens[0]! })).status);
      for (const token of tokens.slice(1))
        for (let i = 0; i < 2; i++) statuses.push((await raw(own, 'GET', '/platform/versions', { token })).status);
      // Per key 3, per user 6 (twice the per-key budget): the fourth key's requests are refused.
      expect(statuses).toEqual([200, 200, 200, 429, 429, 200, 200, 200, 429, 429, 429]);
      const refused = await raw(own, 'GET', '/platform/versions', { token: tokens[3]! });
      expect(refused.json.detail).toMatch(/API keys of this account made more than 6 requests in a minute together/);
      expect(refused.headers.get('ratelimit')).toMatch(/"per-user"; r=0;/);

      const minter = await userWithKey(own, ['content.read']); // its first key
      const em = own.db.orm.em.fork();
      await Promise.all(
        Array.from({ length: 60 }, () =>
          createKey(em.fork(), {
            userId: minter.user.id,
            name: 'mint',
            scopes: ['content.read'],
            expiresInDays: 1,
          }).catch((e: Error) => e),
        ),
      );
      expect(await em.count(ApiKey, { user: minter.user.id })).toBe(50);
      await expect(
        createKey(em.fork(), { userId: minter.user.id, name: 'one more', scopes: ['content.read'], expiresInDays: 1 }),
      ).rejects.toThrow(/50 active API keys, the most it may have/);
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
      expect(res.json.type).toBe('/problems/timeout');
    } finally {
      await own.close();
    }
  });
});
