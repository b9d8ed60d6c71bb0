import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  startServer,
  userWithKey,
  raw,
  keyFor,
  uniqueName,
  fileForm,
  type TestServer,
  type TestUser,
} from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Project } from '../src/projects/project.entity.js';
import { Milestone } from '../src/milestones/milestone.entity.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency.entity.js';
import { png } from './fixtures/images.js';

let t: TestServer;
let ada: TestUser;
beforeAll(async () => {
  t = await startServer();
  ada = await userWithKey(t);
});
afterAll(async () => {
  await t?.close();
});

const create = (body: object, key: string, token = ada.token) =>
  raw(t, 'POST', '/projects', { token, body, headers: { 'idempotency-key': key } });
const count = (name: string) => t.db.orm.em.fork().count(Project, { name });

describe('Idempotency-Key (REST)', () => {
  it('replays the first response for a retry, creating once', async () => {
    const key = randomUUID();
    const name = uniqueName('Idem');
    const first = await create({ name }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const retry = await create({ name }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(await count(name)).toBe(1);
  });

  it('compares requests by meaning: the same JSON with its keys in another order is the same request', async () => {
    const key = randomUUID();
    const name = uniqueName('Idem');
    const send = (body: string) =>
      raw(t, 'POST', '/projects', { token: ada.token, body, headers: { 'idempotency-key': key } });
    expect(
      (await send(`{"name":"${name}","tags":["a","b"],"links":[{"label":"x","url":"https://x.example/"}]}`)).status,
    ).toBe(201);
    const reordered = await send(
      `{"links":[{"url":"https://x.example/","label":"x"}],"tags":["a","b"],"name":"${name}"}`,
    );
    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    // Order inside an array is meaning: that is another request.
    expect(
      (await send(`{"name":"${name}","tags":["b","a"],"links":[{"label":"x","url":"https://x.example/"}]}`)).status,
    ).toBe(422);
    expect(await count(name)).toBe(1);
  });

  it('refuses the same key with another request (422), and keeps keys per API key', async () => {
    const key = randomUUID();
    const name = uniqueName('Idem');
    expect((await create({ name }, key)).status).toBe(201);
    const other = await create({ name: `${name}-other` }, key);
    expect(other.status).toBe(422);
    expect(other.json.type).toBe('https://shipyard.dev/problems/idempotency-key-reused');
    const secondKey = await keyFor(t, ada.user.id, ['projects.write']);
    expect((await create({ name }, key, secondKey)).status).toBe(201);
    expect(await count(name)).toBe(2);
  });

  it('creates once under concurrent retries', async () => {
    const key = randomUUID();
    const name = uniqueName('Idem');
    const results = await Promise.all(Array.from({ length: 6 }, () => create({ name }, key)));
    expect(results.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed')).length).toBe(1);
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(await count(name)).toBe(1);
  });

  it('replays a 4xx too, but not a 5xx; and forgets after 24 hours', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('P') } })).data!;
    const key = randomUUID();
    const far = () =>
      raw(t, 'POST', `/projects/${project.id}/milestones`, {
        token: ada.token,
        body: { title: 'x', position: 5 },
        headers: { 'idempotency-key': key },
      });
    expect((await far()).status).toBe(422);
    const again = await far();
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const name = uniqueName('Idem');
    const old = randomUUID();
    expect((await create({ name }, old)).status).toBe(201);
    await t.db.orm.em
      .fork()
      .nativeUpdate(IdempotencyRecord, { key: old }, { createdAt: new Date(Date.now() - 25 * 3600_000) });
    const later = await create({ name }, old);
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await count(name)).toBe(2);
  });

  it('covers uploads (the bytes are part of the request)', async () => {
    const key = randomUUID();
    const up = (bytes: Buffer) =>
      raw(t, 'POST', '/media', { token: ada.token, body: fileForm(bytes), headers: { 'idempotency-key': key } });
    const first = await up(png(3, 3));
    const retry = await up(png(3, 3));
    expect(retry.json.id).toBe(first.json.id);
    expect((await up(png(4, 4))).status).toBe(422);
  });

  it('refuses a malformed key with 400', async () => {
    expect((await create({ name: 'x' }, 'has spaces in it')).status).toBe(400);
    expect((await create({ name: 'x' }, 'x'.repeat(256))).status).toBe(400);
  });
});

describe('idempotencyKey (MCP create tools)', () => {
  it('returns the first result for a retried create_milestone', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Mcp') } })).data!;
    const transport = new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ada.token}` } },
    });
    const client = new Client({ name: 'retrying-agent', version: '1.0.0' });
    await client.connect(transport);
    const key = randomUUID();
    const call = (title: string) =>
      client.callTool({
        name: 'create_milestone',
        arguments: { projectId: project.id, title, idempotencyKey: key },
      }) as Promise<{ isError?: boolean; structuredContent?: { id: string }; content: { text: string }[] }>;
    const first = await call('Alpha');
    const retry = await call('Alpha');
    expect(retry.structuredContent!.id).toBe(first.structuredContent!.id);
    expect(await t.db.orm.em.fork().count(Milestone, { project: project.id })).toBe(1);
    const reused = await call('Beta');
    expect(reused.isError).toBe(true);
    expect(reused.content[0]!.text).toMatch(/reused/i);
    const { tools } = await client.listTools();
    expect(Object.keys(tools.find((x) => x.name === 'create_milestone')!.inputSchema.properties ?? {})).toContain(
      'idempotencyKey',
    );
    expect(Object.keys(tools.find((x) => x.name === 'get_roadmap')!.inputSchema.properties ?? {})).not.toContain(
      'idempotencyKey',
    );
    await client.close();
  });
});
