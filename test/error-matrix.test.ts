/**
 * Generated from the contract: every operation answers 401 without a key, 400 for a request
 * that breaks the contract, and 404 when an id in its path names nothing — each as
 * application/problem+json, and each status declared in the spec for that operation.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { raw, userWithKey, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';
import { loadContract, listOperations } from '../src/kernel/contract.js';

const contract = loadContract();
const operations = listOperations(contract).filter((op) => op.access.kind !== 'public' && op.access.kind !== 'mcp'); // MCP: JSON-RPC errors, see mcp.test.ts
const withKeys = operations.filter((op) => op.access.kind === 'scope');
const declared = (op: (typeof operations)[number], status: number) =>
  Object.keys((contract.paths[op.path]![op.method] as { responses: object }).responses).includes(String(status));

const { t } = useServer();

function expectProblem(res: Awaited<ReturnType<typeof raw>>, status: number) {
  expect(res.status, JSON.stringify(res.json)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status, type: expect.stringMatching(/^\/problems\/[a-z-]+$/) });
}

describe('401 for every operation without a key', () => {
  for (const op of operations) {
    it(`${op.operationId}`, async () => {
      const { path, body } = await operationRequest(t, contract, op);
      const res = await raw(t, op.method.toUpperCase(), path, { body });
      expectProblem(res, 401);
      // No credentials at all: a challenge without an error code (RFC 6750 §3.1).
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(declared(op, 401)).toBe(true);
    });
  }
});

describe('400 for every operation given a request outside the contract', () => {
  for (const op of withKeys) {
    it(`${op.operationId}: unknown query parameter`, async () => {
      const { owner, path, body } = await operationRequest(t, contract, op);
      const res = await raw(t, op.method.toUpperCase(), `${path}${path.includes('?') ? '&' : '?'}bogus=1`, {
        token: owner.token,
        body,
      });
      expectProblem(res, 400);
      expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/query/bogus' })]));
      expect(declared(op, 400)).toBe(true);
    });
  }
  for (const op of withKeys.filter((o) => /\{\w+Id\}/.test(o.path))) {
    it(`${op.operationId}: malformed id`, async () => {
      const { owner, body, params } = await operationRequest(t, contract, op);
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name.endsWith('Id') ? 'not-an-id' : params[name]!,
      );
      expectProblem(await raw(t, op.method.toUpperCase(), path, { token: owner.token, body }), 400);
    });
  }
});

describe('the refusals the contract declares beyond JSON Schema', () => {
  it('declares that unknown query parameters are refused (each operation is tried above)', () => {
    expect(contract['x-unknown-query-parameters']).toBe('refused');
  });

  const refusingKey = withKeys.filter((op) =>
    ((contract.paths[op.path]![op.method] as { parameters?: { $ref?: string }[] }).parameters ?? []).some((p) =>
      p.$ref?.endsWith('/IdempotencyKeyRefused'),
    ),
  );
  it('declares the Idempotency-Key refused on the creates that cannot be replayed', () => {
    expect(refusingKey.map((op) => op.operationId).sort()).toEqual([
      'createWebhook',
      'pingWebhook',
      'redeliverWebhook',
    ]);
    const refused = (contract.components as { parameters: Record<string, { schema: object }> }).parameters
      .IdempotencyKeyRefused!;
    expect(refused.schema).toEqual({ not: {} });
  });
  for (const op of refusingKey) {
    it(`${op.operationId}: an Idempotency-Key is a 400 that says what to do, and nothing is made`, async () => {
      const { owner, path, body } = await operationRequest(t, contract, op);
      const res = await raw(t, op.method.toUpperCase(), path, {
        token: owner.token,
        body,
        headers: { 'idempotency-key': randomUUID() },
      });
      expectProblem(res, 400);
      expect(res.json.detail).toMatch(new RegExp(`^${op.operationId} takes no Idempotency-Key`));
      expect(res.json.errors).toEqual([
        { path: '/headers/idempotency-key', message: 'this operation takes no Idempotency-Key' },
      ]);
      // Without it, the same request is made.
      expect((await raw(t, op.method.toUpperCase(), path, { token: owner.token, body })).status).toBe(201);
    });
  }

  type Constraint = { rule: string; fields: string[]; error: { path: string; message: string } };
  const constrained = Object.entries(
    (contract.components as { schemas: Record<string, { 'x-constraints'?: Constraint[] }> }).schemas,
  ).filter(([, schema]) => schema['x-constraints']);
  it('declares the salary order on the job bodies, in x-constraints', () => {
    expect(constrained.map(([name]) => name).sort()).toEqual(['JobCreate', 'JobUpdate']);
  });
  for (const [name, schema] of constrained) {
    for (const constraint of schema['x-constraints']!) {
      it(`${name}: ${constraint.rule} is a 400 naming the field`, async () => {
        const { token } = await userWithKey(t, ['jobs.write']);
        const job = {
          title: 'Engineer',
          company: 'Engines',
          description: 'Build',
          remotePolicy: 'remote',
          employmentType: 'full_time',
          applyUrl: 'https://jobs.example.com/x',
        };
        const salary = { salaryMin: 90_000, salaryMax: 70_000, salaryCurrency: 'GBP' };
        const res =
          name === 'JobCreate'
            ? await raw(t, 'POST', '/jobs', { token, body: { ...job, ...salary } })
            : await raw(
                t,
                'PATCH',
                `/jobs/${((await raw(t, 'POST', '/jobs', { token, body: job })).json as { id: string }).id}`,
                {
                  token,
                  body: salary,
                },
              );
        expectProblem(res, 400);
        expect(res.json.errors).toEqual([constraint.error]);
      });
    }
  }
});

describe('404 for every id in a path that names nothing', () => {
  for (const op of withKeys) {
    const names = [...op.path.matchAll(/\{(\w+)\}/g)]
      .map((m) => m[1]!)
      .filter((n) => n.endsWith('Id') || n === 'username');
    for (const name of names) {
      it(`${op.operationId}: unknown ${name}`, async () => {
        const { owner, body, params } = await operationRequest(t, contract, op);
        const unknown = name === 'username' ? 'nobody-at-all' : randomUUID();
        const path =
          op.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === name ? unknown : params[n]!)) +
          (op.operationId === 'search' ? '?q=x' : '');
        expectProblem(await raw(t, op.method.toUpperCase(), path, { token: owner.token, body }), 404);
        expect(declared(op, 404)).toBe(true);
      });
    }
  }
});

describe('route matching: every GET path as the validator reads it, and what no path matches', () => {
  const gets = withKeys.filter((op) => op.method === 'get');
  for (const op of gets) {
    it(`${op.operationId}: with a trailing slash and in capitals, the same operation`, async () => {
      const { owner, path } = await operationRequest(t, contract, op);
      const [bare, query = ''] = path.split('?');
      const q = query ? `?${query}` : '';
      const plain = await raw(t, 'GET', path, { token: owner.token });
      expect(plain.status, JSON.stringify(plain.json)).toBe(200);
      const slash = await raw(t, 'GET', `${bare}/${q}`, { token: owner.token });
      expect(slash.status, JSON.stringify(slash.json)).toBe(200);
      const shouted = bare!.replace(/^\/[^/]+/, (first) => first.toUpperCase());
      const upper = await raw(t, 'GET', `${shouted}${q}`, { token: owner.token });
      expect(upper.status, JSON.stringify(upper.json)).toBe(200);
    });
  }

  it.each([
    '/',
    '/nowhere',
    '/projects/a/b/c/d/e',
    '/projects//milestones',
    '/platform/scopes/extra',
    '/PLATFORM/nothing',
  ])('%s is a 404 problem', async (path) => {
    expectProblem(await raw(t, 'GET', path, { token: (await userWithKey(t)).token }), 404);
  });

  it('a 404 for the base path says where the operations are, and one for a doubled slash says so', async () => {
    const { token } = await userWithKey(t);
    const base = await raw(t, 'GET', '/', { token });
    expect(base.json.detail).toBe(
      'There is no /api/v1 itself: its operations are under it, listed in /api/v1/openapi.json and described at /docs.',
    );
    // A base URL that ends in a slash, with a path added: inside the API's base, and before it.
    for (const url of [`${t.apiUrl}//users/me`, `${t.baseUrl}//api/v1/users/me`]) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /has an empty segment \('\/\/'\): is a slash doubled/,
      );
    }
    expect((await raw(t, 'GET', '/nowhere', { token })).json.detail).toBe('There is no /nowhere in this API.');
  });

  it('a parameter sent twice is said so, not as a value of the wrong type', async () => {
    const res = await raw(t, 'GET', '/projects?limit=10&limit=20', { token: (await userWithKey(t)).token });
    expectProblem(res, 400);
    expect(res.json.errors).toEqual([{ path: '/query/limit', message: 'was sent 2 times; send it once' }]);
  });

  it('a username that breaks the pattern is refused in words, not with the pattern', async () => {
    const { token } = await userWithKey(t);
    for (const path of ['/users/ADA', '/feeds/users/ADA.atom']) {
      const res = await raw(t, 'GET', path, { token });
      expectProblem(res, 400);
      expect(res.json.errors[0].message).toBe(
        'must be a username: lowercase letters, digits and inner hyphens, at most 39 characters, such as ada (usernames are all lowercase)',
      );
    }
  });

  it('a HEAD on a path without a GET is a 405 naming HEAD and the methods the path has', async () => {
    const res = await fetch(`${t.apiUrl}/posts/${randomUUID()}/reactions/rocket`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${(await userWithKey(t)).token}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).not.toMatch(/GET|HEAD/);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('a known path with a method it does not have is a 405 naming the methods it has', async () => {
    const res = await raw(t, 'PUT', '/platform/scopes', { token: (await userWithKey(t)).token });
    expectProblem(res, 405);
    // HEAD beside GET: answered wherever GET is, though the contract lists the GET only.
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    // A person reads the detail, not the header.
    expect(res.json.detail).toBe(`/platform/scopes does not support PUT; it supports ${res.headers.get('allow')}.`);
  });

  it('a value of the wrong format is refused with an example of the right one', async () => {
    const { token } = await userWithKey(t, ['projects.write']);
    const project = await raw(t, 'POST', '/projects', { token, body: { name: 'Formats' } });
    const res = await raw(t, 'POST', `/projects/${(project.json as { id: string }).id}/milestones`, {
      token,
      body: { title: 'Ship', dueDate: '31/12/2026' },
    });
    expectProblem(res, 400);
    expect(res.json.errors).toEqual([
      { path: '/body/dueDate', message: 'must be a date as YYYY-MM-DD, such as 2026-12-31' },
    ]);
    // The right shape is not enough: a day the calendar does not have is refused the same way
    // (it reached PostgreSQL before, which refused it with a 500).
    for (const day of ['2027-02-30', '2026-02-29', '2026-13-01', '2026-04-31', '0000-01-01']) {
      const impossible = await raw(t, 'POST', `/projects/${(project.json as { id: string }).id}/milestones`, {
        token,
        body: { title: 'Ship', dueDate: day },
      });
      expectProblem(impossible, 400);
      expect(impossible.json.errors, day).toEqual([
        { path: '/body/dueDate', message: 'must be a date as YYYY-MM-DD, such as 2026-12-31' },
      ]);
    }
  });

  it.each([
    ['{"name":"x",}', 'expected double-quoted property name at line 1, column 13 (character 13)'],
    [
      '{\n  "name": "x"\n  "tagline": "y"\n}',
      "expected ',' or '}' after property value at line 3, column 3 (character 19)",
    ],
    ['{"name": "x', 'unterminated string at line 1, column 12 (character 12)'],
    // The commonest typos, for which the parser names no place: found by a scan of the grammar.
    ['{"name":}', 'unexpected character at line 1, column 9 (character 9)'],
    ['{\n  "name": tru\n}', 'unexpected character at line 2, column 14 (character 16)'],
    ["{'name': 'x'}", "expected property name or '}' at line 1, column 2 (character 2)"],
    ['{"name": "x"} extra', 'unexpected non-whitespace character at line 1, column 15 (character 15)'],
    ['{"tags": [', 'it ends before the JSON does, at line 1, column 11 (an unclosed string, object or array?)'],
  ])('malformed JSON says where it breaks: %s', async (body, where) => {
    const res = await raw(t, 'POST', '/projects', {
      token: (await userWithKey(t, ['projects.write'])).token,
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400);
    expect(res.json).toMatchObject({
      type: '/problems/malformed-json',
      detail: `The request body is not valid JSON: ${where}.`,
    });
  });
});

describe('HEAD, as every GET answers it, without the body', () => {
  for (const op of withKeys.filter((o) => o.method === 'get')) {
    it(`${op.operationId}`, async () => {
      const { owner, path } = await operationRequest(t, contract, op);
      const [got, head] = [
        await raw(t, 'GET', path, { token: owner.token }),
        await raw(t, 'HEAD', path, { token: owner.token }),
      ];
      expect(head.status, path).toBe(got.status);
      for (const name of [
        'content-type',
        'ratelimit-policy',
        'etag',
        ...(got.status === 200 ? ['content-length'] : []),
      ])
        expect(head.headers.get(name), name).toBe(got.headers.get(name));
    });
  }

  it('sends no body after the headers, as read off the socket itself', async () => {
    // fetch never reads a body for HEAD, whatever is sent: the bytes on the wire are read here.
    const { token } = await userWithKey(t);
    const url = new URL(`${t.apiUrl}/users/me`);
    const wire = await new Promise<string>((resolve, reject) => {
      // Written, not ended: the server closes it after its answer (Connection: close).
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(
          `HEAD ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
        ),
      );
      let got = '';
      socket.on('data', (d) => (got += d));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    const [head, ...rest] = wire.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\ncontent-length: [1-9]\d*\r\n/i);
    expect(rest.join('')).toBe('');
  });

  it('refuses a HEAD without a key as its GET, with the challenge and no body', async () => {
    const res = await fetch(`${t.apiUrl}/users/me`, { method: 'HEAD' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(await res.text()).toBe('');
  });

  it('gives the length and validators of the GET, and a 304 to a HEAD naming them', async () => {
    const { token } = await userWithKey(t, ['projects.write', 'projects.read']);
    const project = await raw(t, 'POST', '/projects', { token, body: { name: 'Headed' } });
    const id = (project.json as { id: string }).id;
    const got = await raw(t, 'GET', `/projects/${id}`, { token });
    const head = await raw(t, 'HEAD', `/projects/${id}`, { token });
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(got.text)));
    const feed = await raw(t, 'GET', `/feeds/projects/${id}.atom`);
    const headFeed = await raw(t, 'HEAD', `/feeds/projects/${id}.atom`);
    expect(headFeed.status).toBe(200);
    expect(headFeed.headers.get('etag')).toBe(feed.headers.get('etag'));
    const again = await raw(t, 'HEAD', `/feeds/projects/${id}.atom`, {
      headers: { 'if-none-match': feed.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });
});
