/**
 * The contract can grow without breaking anyone: response objects are open to new fields in the
 * served contract (so a client that validates strictly against its copy does not break when a
 * field is added), requests stay closed, and the server still never sends a field the contract
 * does not name (it validates its answers against a closed copy).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll } from 'vitest';
import { closedForValidation, loadContract, type OpenApiDocument } from '../src/kernel/contract.js';
import { startServer, userWithKey, type TestServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';

const served = loadContract();
const closed = closedForValidation(served);
type Schemas = Record<string, { additionalProperties?: unknown; properties?: object }>;
const schemasOf = (doc: OpenApiDocument) => (doc.components as { schemas: Schemas }).schemas;

/** The component schemas a request body or parameter reaches, following references. */
function requestSchemas(doc: OpenApiDocument): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const ref = (node as { $ref?: string }).$ref;
    if (ref?.startsWith('#/components/schemas/')) {
      const name = ref.split('/').pop()!;
      if (!found.has(name)) {
        found.add(name);
        visit(schemasOf(doc)[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item) as { requestBody?: unknown; parameters?: unknown }[])
      visit([op?.requestBody, op?.parameters]);
  }
  return found;
}

describe('the served contract', () => {
  it('leaves every response object open and every request object closed', () => {
    const requests = requestSchemas(served);
    for (const [name, schema] of Object.entries(schemasOf(served))) {
      // A JSON-RPC message is read by the MCP transport under the MCP SDK's own rules.
      if (!schema.properties || name === 'JsonRpcMessage') continue;
      if (requests.has(name)) expect(schema.additionalProperties, name).toBe(false);
      else expect(schema.additionalProperties, name).toBeUndefined();
    }
    // RFC 9457: a problem may carry extension members.
    expect(schemasOf(served).Problem!.additionalProperties).toBeUndefined();
  });
});

describe('the copy the server validates its answers against', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('closes every object schema, so an undeclared field in an answer fails', async () => {
    for (const [name, schema] of Object.entries(schemasOf(closed))) {
      if (schema.properties) expect(schema.additionalProperties, name).toBe(false);
    }
    const ada = await userWithKey(t);
    const project = (
      await api.createProject({
        client: ada.client,
        body: { name: 'Open for additions', links: [{ label: 'Home', url: 'https://example.test/' }] },
      })
    ).data!;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'closed', components: closed.components as object }, 'closed');
    ajv.addSchema({ $id: 'served', components: served.components as object }, 'served');
    const against = (doc: string, value: unknown) =>
      ajv.validate({ $ref: `${doc}#/components/schemas/Project` }, value);
    expect(against('closed', project)).toBe(true);
    const grown = { ...project, newField: 1, links: [{ ...project.links[0], rel: 'home' }] };
    expect(against('closed', grown)).toBe(false);
    expect(against('served', grown)).toBe(true); // what a client's copy of the contract says
  });
});

describe('a deprecated operation (the deprecation policy, docs/api-changes.md)', () => {
  it('says so on every response: Deprecation, Sunset and a Link to the explanation', async () => {
    // A fixture: the real contract with GET /platform/versions marked deprecated.
    const doc = structuredClone(served) as OpenApiDocument & {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const op = doc.paths['/platform/versions']!.get!;
    Object.assign(op, {
      deprecated: true,
      'x-deprecated-at': '2026-11-01T00:00:00Z',
      'x-sunset': '2027-06-01T00:00:00Z',
    });
    // Declared on each of its responses, as codegen/bundle.ts writes them for a deprecated operation.
    const shared = (doc.components as { responses: Record<string, object> }).responses;
    const responses = op.responses as Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
    for (const [status, response] of Object.entries(responses)) {
      const own = response.$ref
        ? (structuredClone(shared[response.$ref.split('/').pop()!]) as typeof response)
        : response;
      own.headers = {
        ...own.headers,
        Deprecation: { schema: { type: 'string' } },
        Sunset: { schema: { type: 'string' } },
        Link: { schema: { type: 'string' } },
      };
      responses[status] = own;
    }
    const t = await startServer({ contract: doc });
    try {
      const u = await userWithKey(t, ['content.read']);
      for (const token of [u.token, undefined]) {
        const res = await fetch(`${t.apiUrl}/platform/versions`, {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        expect(res.headers.get('deprecation')).toBe(`@${Date.parse('2026-11-01T00:00:00Z') / 1000}`);
        expect(res.headers.get('sunset')).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
        expect(res.headers.get('link')).toBe('</docs>; rel="deprecation"; type="text/html"');
      }
      const current = await fetch(`${t.apiUrl}/platform/limits`, { headers: { authorization: `Bearer ${u.token}` } });
      expect(current.headers.get('deprecation')).toBeNull();
    } finally {
      await t.close();
    }
  });
});
