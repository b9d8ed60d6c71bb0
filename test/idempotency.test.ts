import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { userWithKey, raw, keyFor, uniqueName, fileForm, mcpCall, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Project } from '../src/projects/project.entity.js';
import { Milestone } from '../src/milestones/milestone.entity.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency.entity.js';
import { SecurityEvent } from '../src/security-log/security-event.entity.js';
import { sweepIdempotencyRecords } from '../src/idempotency/idempotency.service.js';
import { png } from './fixtures/images.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

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

  it("refuses the same key with another request (422), and shares keys between an account's API keys", async () => {
    const key = randomUUID();
    const name = uniqueName('Idem');
    const first = await create({ name }, key);
    expect(first.status).toBe(201);
    const other = await create({ name: `${name}-other` }, key);
    expect(other.status).toBe(422);
    expect(other.json.type).toBe('/problems/idempotency-key-reused');
    // A retry through another key of the same account is the same request: a replay (Stripe's rule).
    const secondKey = await keyFor(t, ada.user.id, ['projects.write']);
    const retried = await create({ name }, key, secondKey);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.json.id).toBe(first.json.id);
    expect(await count(name)).toBe(1);
    // Another account's key with the same Idempotency-Key is its own request.
    const bob = await userWithKey(t, ['projects.write']);
    expect((await create({ name }, key, bob.token)).headers.get('idempotent-replayed')).toBeNull();
    expect(await count(name)).toBe(2);
  });

  it('never replays what has since been deleted: the retry is a 409 saying so, through REST and MCP', async () => {
    const key = randomUUID();
    const made = await create({ name: uniqueName('Gone') }, key);
    expect(made.status).toBe(201);
    await api.deleteProject({ client: ada.client, path: { projectId: made.json.id } });
    const retry = await create({ name: made.json.name }, key);
    expect(retry.status).toBe(409);
    expect(retry.json.type).toBe('/problems/idempotency-resource-gone');
    expect(retry.json.detail).toContain(made.json.id);
    expect(await count(made.json.name)).toBe(0);
    // A milestone made over MCP, gone with its project (a cascade, not a delete of its own).
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('P') } })).data!;
    const mcpKey = randomUUID();
    const call = () => mcp('create_milestone', { projectId: project.id, title: 'Alpha', idempotencyKey: mcpKey });
    expect((await call()).result.isError).toBeFalsy();
    await api.deleteProject({ client: ada.client, path: { projectId: project.id } });
    const again = await call();
    expect(again.result.isError).toBe(true);
    expect(again.result.content[0].text).toMatch(/since been deleted/);
  });

  it('sweeps records older than 24 hours', async () => {
    const key = randomUUID();
    expect((await create({ name: uniqueName('Old') }, key)).status).toBe(201);
    const em = t.db.orm.em.fork();
    await em.nativeUpdate(IdempotencyRecord, { key }, { createdAt: new Date(Date.now() - 25 * 3600_000) });
    expect(await sweepIdempotencyRecords(t.db.orm.em.fork())).toBeGreaterThanOrEqual(1);
    expect(await t.db.orm.em.fork().count(IdempotencyRecord, { key })).toBe(0);
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
    expect(again.json).toEqual((await far()).json);
    expect(again.json.code).toBe('position-out-of-range');
    // The same refusal replayed through MCP keeps its code.
    const viaMcp = await mcpCall(t, ada.token, 'create_milestone', {
      projectId: project.id,
      title: 'x',
      position: 5,
      idempotencyKey: key,
    });
    expect(viaMcp.json.result.isError).toBe(true);
    expect(viaMcp.json.result._meta['shipyard.dev/problem']).toMatchObject({
      code: 'position-out-of-range',
      status: 422,
    });
    // A refusal kept before problems carried a code (API 1.3.0; an older instance during a
    // deploy): replayed with its type's slug as its code, as the contract requires.
    const em = t.db.orm.em.fork();
    const record = await em.findOneOrFail(IdempotencyRecord, { key });
    const { code: _code, ...before13 } = record.responseBody as Record<string, unknown>;
    await em.nativeUpdate(IdempotencyRecord, { key }, { responseBody: before13 });
    const older = await far();
    expect(older.status).toBe(422);
    expect(older.json).toMatchObject({ type: '/problems/unprocessable', code: 'unprocessable' });

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

/** A raw MCP tools/call with ada's key: its JSON-RPC answer. */
const mcp = async (name: string, args: Record<string, unknown>) => (await mcpCall(t, ada.token, name, args)).json;

describe('one namespace across REST and MCP', () => {
  it('replays a milestone created over MCP when the same key retries it over REST, and the other way round', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Both') } })).data!;
    const key = randomUUID();
    const viaMcp = await mcp('create_milestone', { projectId: project.id, title: 'Alpha', idempotencyKey: key });
    expect(viaMcp.result.isError).toBeFalsy();
    const viaRest = await raw(t, 'POST', `/projects/${project.id}/milestones`, {
      token: ada.token,
      body: { title: 'Alpha' },
      headers: { 'idempotency-key': key },
    });
    expect(viaRest.status).toBe(201);
    expect(viaRest.headers.get('idempotent-replayed')).toBe('true');
    expect(viaRest.json.id).toBe(viaMcp.result.structuredContent.id);
    expect(viaRest.headers.get('location')).toBe(`/api/v1/projects/${project.id}/milestones/${viaRest.json.id}`);

    const other = randomUUID();
    const post = await raw(t, 'POST', '/posts', {
      token: ada.token,
      body: { kind: 'build_log', projectId: project.id, title: 'Week 1', body: 'gears' },
      headers: { 'idempotency-key': other },
    });
    expect(post.status).toBe(201);
    const log = await mcp('create_build_log', {
      projectId: project.id,
      title: 'Week 1',
      body: 'gears',
      idempotencyKey: other,
    });
    expect(log.result.structuredContent.id).toBe(post.json.id);
    expect(await t.db.orm.em.fork().count(Milestone, { project: project.id })).toBe(1);
    // The same key for something else, on either side, is refused.
    const reused = await mcp('create_milestone', { projectId: project.id, title: 'Beta', idempotencyKey: key });
    expect(reused.result.isError).toBe(true);
    expect(reused.result.content[0].text).toMatch(/reused/i);
  });
});

describe('one write ending for REST and MCP (src/writes/writes.service.ts)', () => {
  it('keeps the same idempotency record and writes the same security-log entry, once, through either', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Ending') } })).data!;
    const [restKey, mcpKey] = [randomUUID(), randomUUID()];
    const rest = await raw(t, 'POST', `/projects/${project.id}/milestones`, {
      token: ada.token,
      body: { title: 'Same' },
      headers: { 'idempotency-key': restKey },
    });
    expect(rest.status).toBe(201);
    const viaMcp = await mcp('create_milestone', { projectId: project.id, title: 'Same', idempotencyKey: mcpKey });
    expect(viaMcp.result.isError).toBeFalsy();
    const ids = [rest.json.id as string, viaMcp.result.structuredContent.id as string];
    // Each retry is a replay: nothing made, nothing logged again.
    await raw(t, 'POST', `/projects/${project.id}/milestones`, {
      token: ada.token,
      body: { title: 'Same' },
      headers: { 'idempotency-key': restKey },
    });
    await mcp('create_milestone', { projectId: project.id, title: 'Same', idempotencyKey: mcpKey });

    const em = t.db.orm.em.fork();
    const records = await Promise.all(
      [restKey, mcpKey].map((key) => em.findOneOrFail(IdempotencyRecord, { userId: ada.user.id, key })),
    );
    const shape = (r: IdempotencyRecord, id: string) => ({
      state: r.state,
      status: r.status,
      location: r.location,
      resourceId: r.resourceId,
      body: { id: (r.responseBody as { id: string }).id, title: (r.responseBody as { title: string }).title },
      at: `/api/v1/projects/${project.id}/milestones/${id}`,
    });
    const [fromRest, fromMcp] = [shape(records[0]!, ids[0]!), shape(records[1]!, ids[1]!)];
    for (const [record, id] of [
      [fromRest, ids[0]],
      [fromMcp, ids[1]],
    ] as const)
      expect(record).toEqual({
        state: 'done',
        status: 201,
        location: record.at,
        resourceId: id,
        body: { id, title: 'Same' },
        at: record.at,
      });
    // The same request, whichever way it came.
    expect(records[0]!.requestHash).toBe(records[1]!.requestHash);

    const entries = await em.find(
      SecurityEvent,
      { user: ada.user.id, kind: 'key.write', resource: { $in: [fromRest.at, fromMcp.at] } },
      { orderBy: { id: 'asc' } },
    );
    expect(
      entries.map((e) => ({ channel: e.channel, operation: e.operation, resource: e.resource, name: e.resourceName })),
    ).toEqual([
      { channel: 'rest', operation: 'createMilestone', resource: fromRest.at, name: 'Same' },
      { channel: 'mcp', operation: 'createMilestone', resource: fromMcp.at, name: 'Same' },
    ]);
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
