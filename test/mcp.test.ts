import { loadContract } from '../src/kernel/contract.js';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as z from 'zod';
import { userWithKey, uniqueName, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Milestone } from '../src/milestones/milestone.entity.js';
import { runTool } from '../src/mcp/run-tool.js';
import { TOOLS } from '../src/mcp/catalogue.js';
import { defineTool } from '../src/mcp/kit/tool.js';
import { createLogger } from '../src/http/log.js';
import { SCOPE_IDS, type ScopeId } from '../src/kernel/scopes.js';
import { createKey } from '../src/keys/keys.service.js';

const KEYS_PAGE = 'http://localhost/settings/keys';
const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
const TOOL_NAMES = [
  'create_build_log',
  'create_milestone',
  'delete_milestone',
  'get_roadmap',
  'list_build_logs',
  'list_my_projects',
  'update_milestone',
];

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

/** An SDK client; `offer` rewrites the protocol version the client offers in initialize. */
async function connect(token: string, offer?: string) {
  const rewrite: typeof fetch = async (input, init) => {
    if (offer && typeof init?.body === 'string' && init.body.includes('"initialize"')) {
      const msg = JSON.parse(init.body);
      msg.params.protocolVersion = offer;
      init = { ...init, body: JSON.stringify(msg) };
    }
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: rewrite,
  });
  const client = new Client({ name: 'shipyard-test', version: '1.0.0' });
  await client.connect(transport);
  // The SDK client checks every structuredContent against its tool's outputSchema once it has the list.
  await client.listTools();
  return { client, transport };
}

/**
 * Each tool's hints as the MCP specification defines them: a read is read-only and idempotent; a
 * create adds and changes nothing that was there (not destructive); an update overwrites fields
 * (null erases) and a delete removes, both destructive, and both have no further effect when
 * repeated. None reaches outside Shipyard (openWorldHint false).
 */
const ANNOTATIONS: Record<string, object> = {
  list_my_projects: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  get_roadmap: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  list_build_logs: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  create_milestone: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  create_build_log: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  update_milestone: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete_milestone: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};
type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;

async function rawMcp(body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  const res = await fetch(`${t.apiUrl}/mcp`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

/** A test's own tool, with the scope its operation needs. */
const bind = (...args: Parameters<typeof defineTool>) => ({ ...defineTool(...args), scope: 'projects.read' as const });

describe('MCP through the SDK client', () => {
  for (const version of VERSIONS) {
    it(`negotiates ${version} and serves the seven tools`, async () => {
      const { client, transport } = await connect(ada.token, version);
      expect(transport.protocolVersion).toBe(version);
      expect(transport.sessionId).toBeUndefined();
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(TOOL_NAMES);
      for (const tool of tools) {
        expect(tool.outputSchema, tool.name).toBeDefined();
        expect(tool.annotations, tool.name).toEqual(ANNOTATIONS[tool.name]);
      }
      const listed = await call(client, 'list_my_projects');
      expect(listed.isError).toBeFalsy();
      expect(listed.structuredContent.items).toBeInstanceOf(Array);
      expect(listed.content[0]!.text).toMatch(/^\d+ projects? you own, newest first\./);
      await client.close();
    });
  }

  it('answers an initialize with another version with 2025-11-25', async () => {
    for (const offer of ['2024-11-05', '2026-07-28']) {
      const res = await rawMcp(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: offer, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        },
        { authorization: `Bearer ${ada.token}` },
      );
      expect(res.status).toBe(200);
      expect(res.json.result.protocolVersion).toBe('2025-11-25');
    }
  });

  it('runs the roadmap and build-log workflow with the same ids as REST', async () => {
    const project = await api.createProject({ client: ada.client, body: { name: uniqueName('Mcp') } });
    const projectId = project.data!.id;
    const { client } = await connect(ada.token);

    const mine = await call(client, 'list_my_projects', { limit: 100 });
    expect(mine.structuredContent.items.map((p: { id: string }) => p.id)).toContain(projectId);

    const created = await call(client, 'create_milestone', {
      projectId,
      title: 'Alpha',
      description: 'first cut',
      dueDate: '2027-01-15',
    });
    expect(created.isError).toBeFalsy();
    const milestoneId = created.structuredContent.id;
    const viaRest = await api.getMilestone({ client: ada.client, path: { projectId, milestoneId } });
    expect(viaRest.data).toEqual(created.structuredContent);

    const second = await call(client, 'create_milestone', { projectId, title: 'Beta', position: 1 });
    expect(second.structuredContent.position).toBe(1);

    const updated = await call(client, 'update_milestone', { projectId, milestoneId, status: 'in_progress' });
    expect(updated.structuredContent).toMatchObject({
      title: 'Alpha',
      description: 'first cut',
      dueDate: '2027-01-15',
      status: 'in_progress',
      position: 2,
    });
    const cleared = await call(client, 'update_milestone', {
      projectId,
      milestoneId,
      dueDate: null,
      description: null,
    });
    expect(cleared.structuredContent).toMatchObject({
      title: 'Alpha',
      description: null,
      dueDate: null,
      status: 'in_progress',
    });
    // The contract's "at least one field" (MilestoneUpdate minProperties) holds over MCP too.
    const nothing = await call(client, 'update_milestone', { projectId, milestoneId });
    expect(nothing.isError).toBe(true);
    expect(nothing.content[0]?.text).toContain(
      'Invalid arguments for update_milestone: send at least one of title, description, status, startDate, dueDate, dueDateReason, position.',
    );

    const roadmap = await call(client, 'get_roadmap', { projectId });
    expect(roadmap.structuredContent.items.map((m: { title: string }) => m.title)).toEqual(['Beta', 'Alpha']);

    const deleted = await call(client, 'delete_milestone', { projectId, milestoneId });
    expect(deleted.structuredContent).toEqual({ deleted: true, milestoneId, title: 'Alpha' });
    expect(await t.db.orm.em.fork().count(Milestone, { id: milestoneId })).toBe(0);
    const after = await call(client, 'get_roadmap', { projectId });
    expect(
      after.structuredContent.items.map((m: { title: string; position: number }) => [m.title, m.position]),
    ).toEqual([['Beta', 1]]);

    const log = await call(client, 'create_build_log', {
      projectId,
      title: 'Day 1',
      body: 'Set up the **roadmap**.',
      tags: ['MCP'],
    });
    expect(log.structuredContent).toMatchObject({ kind: 'build_log', projectId, tags: ['mcp'] });
    const logs = await call(client, 'list_build_logs', { projectId });
    expect(logs.structuredContent.items[0].id).toBe(log.structuredContent.id);
    const viaRestLogs = await api.listBuildLogs({ client: ada.client, path: { projectId } });
    expect(viaRestLogs.data!.items[0]!.id).toBe(log.structuredContent.id);
    await client.close();
  });

  it('checks each tool for its own scope, as an isError result naming it', async () => {
    const project = await api.createProject({ client: ada.client, body: { name: uniqueName('Scoped') } });
    const readOnly = await userWithKey(t, ['projects.read']);
    const { client } = await connect(readOnly.token);
    const res = await call(client, 'create_milestone', { projectId: project.data!.id, title: 'x' });
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toContain("'projects.write'");
    expect(res.content[0]!.text).toContain('projects.read');

    const writer = await userWithKey(t, ['projects.write']);
    const w = await connect(writer.token);
    const read = await call(w.client, 'get_roadmap', { projectId: project.data!.id });
    expect(read.isError).toBe(true);
    expect(read.content[0]!.text).toContain("'projects.read'");
    const log = await call(w.client, 'create_build_log', { projectId: project.data!.id, title: 't', body: 'b' });
    expect(log.content[0]!.text).toContain("'content.write'");
  });

  it('enforces owner and member rules with a clear reason', async () => {
    const project = await api.createProject({ client: ada.client, body: { name: uniqueName('Owned') } });
    const projectId = project.data!.id;
    const member = await userWithKey(t);
    const stranger = await userWithKey(t);
    await api.addProjectMember({ client: ada.client, path: { projectId }, body: { username: member.user.username } });

    const m = await connect(member.token);
    const add = await call(m.client, 'create_milestone', { projectId, title: 'not mine' });
    expect(add.isError).toBe(true);
    expect(add.content[0]!.text).toMatch(/Only the owner/);
    const log = await call(m.client, 'create_build_log', { projectId, title: 'member log', body: 'ok' });
    expect(log.isError).toBeFalsy();

    const s = await connect(stranger.token);
    const slog = await call(s.client, 'create_build_log', { projectId, title: 'nope', body: 'no' });
    expect(slog.isError).toBe(true);
    expect(slog.content[0]!.text).toMatch(/owner and members/);
    const missing = await call(s.client, 'get_roadmap', { projectId: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/No project/);
  });

  it('refuses unknown arguments and bad values as tool errors, changing nothing', async () => {
    const project = await api.createProject({ client: ada.client, body: { name: uniqueName('Strict') } });
    const { client } = await connect(ada.token);
    const extra = await call(client, 'create_milestone', { projectId: project.data!.id, title: 'x', ownerId: 'me' });
    expect(extra.isError).toBe(true);
    expect(extra.content[0]!.text).toBe('Invalid arguments for create_milestone: Unrecognized key: "ownerId".');
    const bad = await call(client, 'create_milestone', { projectId: project.data!.id, title: '' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/^Invalid arguments for create_milestone: .* at title\.$/);
    const two = await call(client, 'create_milestone', { projectId: 'nope' });
    expect(two.content[0]!.text).toMatch(
      /^Invalid arguments for create_milestone: .* at projectId; .* at title\. projectId is the project's id, a UUID/,
    );
    const nul = await call(client, 'create_milestone', { projectId: project.data!.id, title: 'a\u0000b' });
    expect(nul.isError).toBe(true);
    expect(nul.content[0]!.text).toMatch(/NUL/);
    expect(await t.db.orm.em.fork().count(Milestone, { project: project.data!.id })).toBe(0);
  });

  it('answers an unknown tool with JSON-RPC error -32602', async () => {
    const { client } = await connect(ada.token);
    await expect(client.callTool({ name: 'drop_database', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('serves concurrent requests (one server per request)', async () => {
    const project = await api.createProject({ client: ada.client, body: { name: uniqueName('Busy') } });
    const clients = await Promise.all(Array.from({ length: 5 }, () => connect(ada.token)));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(clients[i % 5]!.client, 'create_milestone', { projectId: project.data!.id, title: `C${i}` }),
      ),
    );
    expect(results.filter((r) => r.isError)).toEqual([]);
    const roadmap = await api.listMilestones({
      client: ada.client,
      path: { projectId: project.data!.id },
      query: { limit: 100 },
    });
    expect(roadmap.data!.items.map((m) => m.position)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('never leaks a thrown error message', async () => {
    const boom = bind({
      name: 'boom',
      operation: 'listProjects',
      title: 'b',
      description: 'b',
      input: z.object({}),
      output: z.object({}),
      annotations: {},
      run: async () => {
        throw new Error('password=hunter2 at db.internal:5432');
      },
      headline: () => 'never reached',
    });
    const res = await runTool(
      boom,
      {},
      { em: t.db.orm.em.fork(), actor: { userId: ada.user.id, via: 'key', scopes: SCOPE_IDS } },
      { log: createLogger('silent'), requestId: 'req1', checkOutput: true, keysPage: KEYS_PAGE },
    );
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res)).not.toContain('hunter2');
    expect((res.content[0] as { text: string }).text).toMatch(/Internal error while running boom \(request req1\)/);
    expect(res._meta).toEqual({
      'shipyard.dev/problem': { type: '/problems/internal', code: 'internal', status: 500 },
    });
  });

  it("checks each result against the tool's output schema (VALIDATE_RESPONSES, on in tests) and never sends one that fails", async () => {
    const wrong = bind({
      name: 'wrong',
      operation: 'listProjects',
      title: 'w',
      description: 'w',
      input: z.object({}).strict(),
      output: z.object({ count: z.int() }),
      annotations: {},
      run: async () => ({ count: 'many', secret: 'x' }) as never,
      headline: () => 'never reached',
    });
    const logged: unknown[] = [];
    const log = {
      info: () => undefined,
      error: (msg: string, fields?: Record<string, unknown>) => void logged.push({ msg, ...fields }),
    };
    const ctx = { em: t.db.orm.em.fork(), actor: { userId: ada.user.id, via: 'key' as const, scopes: SCOPE_IDS } };
    const res = await runTool(wrong, {}, ctx, { log, requestId: 'req2', checkOutput: true, keysPage: KEYS_PAGE });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toBeUndefined();
    expect(JSON.stringify(res)).not.toContain('many');
    expect((res.content[0] as { text: string }).text).toMatch(
      /Internal error while running wrong \(request req2\).*not sent/,
    );
    expect(logged).toEqual([
      expect.objectContaining({
        msg: 'tool failed',
        requestId: 'req2',
        tool: 'wrong',
        error: expect.objectContaining({ name: 'OutputMismatch', message: expect.stringMatching(/count/) }),
      }),
    ]);
    // With the check off (VALIDATE_RESPONSES=false), the same result goes out as the tool made it.
    const unchecked = await runTool(wrong, {}, ctx, {
      log,
      requestId: 'req3',
      checkOutput: false,
      keysPage: KEYS_PAGE,
    });
    expect(unchecked.structuredContent).toEqual({ count: 'many', secret: 'x' });
    // Through HTTP, the app's server checks too (the harness runs with VALIDATE_RESPONSES on).
    const listMine = TOOLS.find((x) => x.name === 'list_my_projects')!;
    const run = listMine.run;
    listMine.run = async () => ({ items: 'not a list', nextCursor: null }) as never;
    try {
      const { client } = await connect(ada.token);
      const viaHttp = await call(client, 'list_my_projects');
      expect(viaHttp.isError).toBe(true);
      expect(viaHttp.content[0]!.text).toMatch(/Internal error while running list_my_projects .*not sent/);
      await client.close();
    } finally {
      listMine.run = run;
    }
    // Arguments are checked before the tool runs, with the field named.
    const args = await runTool(wrong, { extra: 1 }, ctx, {
      log,
      requestId: 'req4',
      checkOutput: true,
      keysPage: KEYS_PAGE,
    });
    expect((args.content[0] as { text: string }).text).toBe('Invalid arguments for wrong: Unrecognized key: "extra".');
  });
});

describe('MCP at the HTTP level', () => {
  it('401 without a valid key', async () => {
    const none = await rawMcp(listTools);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.json.error.code).toBe(-32001);
    const bad = await rawMcp(listTools, { authorization: 'Bearer shipyard_pat_0000' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('403 for a valid key with none of the MCP scopes', async () => {
    const outsider = await userWithKey(
      t,
      SCOPE_IDS.filter((s): s is ScopeId => !['projects.read', 'projects.write', 'content.write'].includes(s)),
    );
    const res = await rawMcp(listTools, { authorization: `Bearer ${outsider.token}` });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
    for (const scope of ['projects.read', 'projects.write', 'content.write'] as const) {
      const one = await userWithKey(t, [scope]);
      expect((await rawMcp(listTools, { authorization: `Bearer ${one.token}` })).status).toBe(200);
    }
  });

  it('400 for an unsupported MCP-Protocol-Version header', async () => {
    for (const v of ['2024-11-05', '2024-10-07', 'garbage']) {
      const res = await rawMcp(listTools, { authorization: `Bearer ${ada.token}`, 'mcp-protocol-version': v });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toMatch(/Unsupported protocol version/);
    }
    for (const v of VERSIONS) {
      expect(
        (await rawMcp(listTools, { authorization: `Bearer ${ada.token}`, 'mcp-protocol-version': v })).status,
      ).toBe(200);
    }
  });

  it('405 for GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await rawMcp(undefined, { authorization: `Bearer ${ada.token}` }, method);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('400 -32600 for an id past its bounds, never echoed (a 60 KB id came back whole)', async () => {
    const auth = { authorization: `Bearer ${ada.token}` };
    for (const id of ['x'.repeat(60_000), 'x'.repeat(201), 2 ** 53]) {
      const res = await rawMcp(JSON.stringify({ ...listTools, id }), auth);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(res.text.length).toBeLessThan(500);
    }
    const longest = await rawMcp(JSON.stringify({ ...listTools, id: 'x'.repeat(200) }), auth);
    expect(longest.status).toBe(200);
    expect(longest.json.id).toBe('x'.repeat(200));
  });

  it('400 -32700 for malformed JSON', async () => {
    const res = await rawMcp('{"jsonrpc": "2.0", ', { authorization: `Bearer ${ada.token}` });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(-32700);
  });

  // The Streamable HTTP rules for a POST (spec 2025-11-25, "Sending Messages to the Server").
  it('406 unless the client accepts both JSON and an event stream; 415 for a body that is not JSON', async () => {
    const auth = { authorization: `Bearer ${ada.token}` };
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      const res = await rawMcp(listTools, { ...auth, accept });
      expect(res.status, accept).toBe(406);
      expect(res.json).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32000, message: expect.stringMatching(/Not Acceptable/) },
      });
    }
    // Whatever a body not declared JSON holds, its id is not read: the same answer for each.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json', 'text/json']) {
      const text = await rawMcp(JSON.stringify(listTools), { ...auth, 'content-type': type });
      expect(text.status, type).toBe(415);
      expect(text.json, type).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
      });
    }
    const ok = await rawMcp(listTools, { ...auth, 'content-type': 'application/json; charset=utf-8' });
    expect(ok.status).toBe(200);
    // The contract's Accept pattern says what the server takes: any order, with parameters.
    const declared = (
      loadContract().paths['/mcp'] as { post: { parameters: { name: string; schema: { pattern: string } }[] } }
    ).post.parameters.find((p) => p.name === 'Accept')!;
    const pattern = new RegExp(declared.schema.pattern);
    for (const accept of [
      'application/json, text/event-stream',
      'text/event-stream, application/json',
      'application/json;q=0.9,text/event-stream;q=0.8',
    ]) {
      expect(pattern.test(accept), accept).toBe(true);
      expect((await rawMcp(listTools, { ...auth, accept })).status, accept).toBe(200);
    }
    for (const accept of ['application/json', 'text/event-stream', '*/*'])
      expect(pattern.test(accept), accept).toBe(false);
    // Declared on the MCP answers as on REST ones: when the key stops working.
    expect(new Date(ok.headers.get('shipyard-key-expiration')!).getTime()).toBeGreaterThan(Date.now());
  });

  it('202 with no body for notifications only; 400 -32600 for JSON that is not a JSON-RPC message', async () => {
    const auth = { authorization: `Bearer ${ada.token}` };
    const note = await rawMcp({ jsonrpc: '2.0', method: 'notifications/initialized' }, auth);
    expect(note.status).toBe(202);
    expect(note.json).toBeUndefined();
    for (const body of [{ hello: 'world' }, { jsonrpc: '1.0', method: 'tools/list' }, 42]) {
      const res = await rawMcp(body, auth);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }
  });

  it('answers a batch with one response per request, in order; refuses an initialize in a batch, a repeated id and batches over 100', async () => {
    const auth = { authorization: `Bearer ${ada.token}` };
    const batch = await rawMcp(
      [
        { ...listTools, id: 'a' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'list_my_projects', arguments: {} } },
      ],
      auth,
    );
    expect(batch.status).toBe(200);
    expect(batch.json.map((r: { id: string }) => r.id)).toEqual(['a', 'b']);
    expect(batch.json[0].result.tools).toHaveLength(7);
    expect(batch.json[1].result.isError).toBeUndefined();
    // A cancellation of a request in its own batch is ignored: the request is answered, at once.
    const cancelled = await rawMcp(
      [
        { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'list_my_projects', arguments: {} } },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c', reason: 'changed my mind' } },
      ],
      auth,
    );
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toHaveLength(1);
    expect(cancelled.json[0]).toMatchObject({ id: 'c', result: { content: [{ type: 'text' }] } });
    const onlyCancel = await rawMcp(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'gone' } },
      { ...auth, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(onlyCancel.status).toBe(202);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const twice = await rawMcp([init, { ...listTools, id: 2 }], auth);
    expect(twice.status).toBe(400);
    expect(twice.json.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/initialization request must not be part of a batch/),
    });
    const same = await rawMcp(
      [
        { ...listTools, id: 7 },
        { ...listTools, id: 7 },
      ],
      auth,
    );
    expect(same.status).toBe(400);
    expect(same.json.error).toMatchObject({ code: -32600, message: expect.stringMatching(/its own id/) });
    const big = await rawMcp(
      Array.from({ length: 101 }, (_, i) => ({ ...listTools, id: i })),
      auth,
    );
    expect(big.status).toBe(400);
    expect(big.json.error).toMatchObject({ code: -32600, message: expect.stringMatching(/Batch must not exceed 100/) });
  });
});

describe('params that do not have the shape the protocol gives them', () => {
  const headers = () => ({ authorization: `Bearer ${ada.token}`, 'mcp-protocol-version': '2025-11-25' });

  it('answers tools/call arguments that are not an object with -32602 naming the field, not an internal error', async () => {
    for (const args of [null, [1, 2], 's', 7]) {
      const res = await rawMcp(
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_my_projects', arguments: args } },
        headers(),
      );
      expect(res.status, JSON.stringify(args)).toBe(200);
      expect(res.json, JSON.stringify(args)).toMatchObject({
        id: 9,
        error: { code: -32602, message: expect.stringMatching(/^Invalid params: params\.arguments: /) },
      });
      expect(res.json.error.message.length).toBeLessThan(200);
    }
  });

  it('answers an initialize without params or without clientInfo with -32602', async () => {
    for (const params of [undefined, { protocolVersion: '2025-11-25', capabilities: {} }]) {
      const res = await rawMcp({ jsonrpc: '2.0', id: 'i', method: 'initialize', params }, headers());
      expect(res.json, JSON.stringify(params)).toMatchObject({
        id: 'i',
        error: { code: -32602, message: expect.stringMatching(/^Invalid params: params(\.clientInfo)?: /) },
      });
    }
  });

  it('refuses an argument the tool does not take, __proto__ included, by its name, and changes nothing', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('P') } })).data!;
    const before = await t.db.orm.em.fork().count(Milestone, { project: project.id });
    const call = (args: string) =>
      rawMcp(
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_milestone","arguments":${args}}}`,
        headers(),
      );
    const typo = await call(`{"projectId":"${project.id}","title":"x","titel":"typo"}`);
    expect(typo.json.result.isError).toBe(true);
    expect(typo.json.result.content[0].text).toMatch(/Unrecognized key: "titel"/);
    for (const args of [
      `{"projectId":"${project.id}","title":"x","__proto__":{"isAdmin":true}}`,
      `{"projectId":"${project.id}","title":"x","nested":{"__proto__":{"isAdmin":true}}}`,
    ]) {
      const res = await call(args);
      expect(res.json.error, args).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^Invalid params: params\.arguments(\.nested)?\.__proto__: /),
      });
    }
    expect(await t.db.orm.em.fork().count(Milestone, { project: project.id })).toBe(before);
  });
});

describe('a key about to expire', () => {
  it('says so in every tool result, in the text and in _meta, fewer than 7 days ahead only', async () => {
    const em = t.db.orm.em.fork();
    const scopes = ['projects.read', 'projects.write'];
    const soon = await createKey(em, { userId: ada.user.id, name: 'soon', scopes, expiresInDays: 2 });
    const later = await createKey(em, { userId: ada.user.id, name: 'later', scopes, expiresInDays: 30 });
    const week = await createKey(em, { userId: ada.user.id, name: 'week', scopes, expiresInDays: 7 });
    const results = async (token: string) => {
      const client = new Client({ name: 'expiry', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const ok = await client.callTool({ name: 'list_my_projects', arguments: {} });
      const refused = await client.callTool({ name: 'get_roadmap', arguments: { projectId: 'not-an-id' } });
      await client.close();
      return [ok, refused] as { content: { text: string }[]; _meta?: Record<string, unknown>; isError?: boolean }[];
    };
    for (const result of await results(soon.token)) {
      expect(result._meta?.['shipyard.dev/key-expiration']).toEqual({
        expiresAt: soon.key.expiresAt.toISOString(),
        daysLeft: 2,
        renewAt: expect.stringMatching(/\/settings\/keys$/),
      });
      expect(result.content[0]!.text).toContain('this API key expires in 2 days');
    }
    for (const token of [later.token, week.token])
      for (const result of await results(token)) {
        expect(result._meta?.['shipyard.dev/key-expiration']).toBeUndefined();
        expect(result.content[0]!.text).not.toContain('expires');
      }
  });
});
