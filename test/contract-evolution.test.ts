/**
 * The contract can grow without breaking anyone: response objects are open to new fields in the
 * served contract (so a client that validates strictly against its copy does not break when a
 * field is added), requests stay closed, and the server still never sends a field the contract
 * does not name (it validates its answers against a closed copy).
 */
import { changesHtml } from '../src/web/changes.page.js';
import { contractWithDeprecatedVersions } from './deprecated-contract.js';
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
    const doc = contractWithDeprecatedVersions();
    const t = await startServer({ contract: doc });
    try {
      const u = await userWithKey(t, ['content.read']);
      for (const token of [u.token, undefined]) {
        const res = await fetch(`${t.apiUrl}/platform/versions`, {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        expect(res.headers.get('deprecation')).toBe(`@${Date.parse('2026-11-01T00:00:00Z') / 1000}`);
        expect(res.headers.get('sunset')).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
        expect(res.headers.get('link')).toBe(
          '</docs/changes#deprecate-getVersions>; rel="deprecation"; type="text/html"',
        );
      }
      const current = await fetch(`${t.apiUrl}/platform/limits`, { headers: { authorization: `Bearer ${u.token}` } });
      expect(current.headers.get('deprecation')).toBeNull();
      // A browser page elsewhere may read them: they are exposed to CORS, deprecated operation or not.
      const cross = await fetch(`${t.apiUrl}/platform/limits`, {
        headers: { authorization: `Bearer ${u.token}`, origin: 'https://app.example' },
      });
      const exposed = cross.headers.get('access-control-expose-headers')!.split(', ');
      for (const name of ['Deprecation', 'Sunset', 'Link']) expect(exposed).toContain(name);
      // The Link lands on the changelog, served by the same server.
      const changes = await fetch(`${t.baseUrl}/docs/changes`);
      expect(changes.status).toBe(200);
      const text = await changes.text();
      expect(text).toContain('id="deprecation-policy"');
      expect(text).toContain(`id="${(served.info as { version: string }).version.replaceAll('.', '-')}-`);
    } finally {
      await t.close();
    }
  });
});

describe('the changelog page (/docs/changes)', () => {
  it("gives each deprecation entry an anchor per operation it names, and keeps the repository's links as text", () => {
    const body = changesHtml(
      [
        '# API changes',
        '## 9.9.0 — 2027-01-01',
        '### Deprecated',
        '- `deprecate /paths/~1platform~1versions/get` — use `GET /platform/limits` instead.',
        '- `deprecate /paths/~1projects/*` — both list and create (see [the guide](webhooks.md)).',
        '- see [RFC 9745](https://www.rfc-editor.org/rfc/rfc9745).',
      ].join('\n'),
      served,
    ).html;
    expect(body).toContain('<h2 id="9-9-0-2027-01-01">');
    expect(body).toContain('<h3 id="9-9-0-2027-01-01-deprecated">');
    expect(body).toContain('<span id="deprecate-getVersions"></span>');
    expect(body).toContain('<span id="deprecate-listProjects"></span><span id="deprecate-createProject"></span>');
    expect(body).not.toContain('href="webhooks.md"');
    expect(body).toContain('the guide');
    expect(body).toContain('href="https://www.rfc-editor.org/rfc/rfc9745"');
  });
});

describe('the documentation in the contract', () => {
  type Schema = {
    $ref?: string;
    type?: string | string[];
    format?: string;
    description?: string;
    example?: unknown;
    examples?: unknown[];
    enum?: unknown[];
    const?: unknown;
    properties?: Record<string, Schema>;
    items?: Schema;
    allOf?: Schema[];
    oneOf?: Schema[];
    anyOf?: Schema[];
  };
  const schemas = schemasOf(served) as Record<string, Schema>;
  /** Every property of every component schema, nested ones included, by where it is. */
  const properties = (): [string, Schema][] => {
    const found: [string, Schema][] = [];
    const walk = (s: Schema | undefined, at: string): void => {
      if (!s) return;
      for (const [name, p] of Object.entries(s.properties ?? {})) {
        found.push([`${at}.${name}`, p]);
        walk(p, `${at}.${name}`);
      }
      walk(s.items, `${at}[]`);
      for (const list of [s.allOf, s.oneOf, s.anyOf])
        for (const [i, x] of (list ?? []).entries()) walk(x, `${at}/${i}`);
    };
    for (const [name, s] of Object.entries(schemas)) walk(s, name);
    return found;
  };

  it('describes every property in words of its own, a reference too (hover docs stop at a bare $ref)', () => {
    const all = properties();
    expect(all.length).toBeGreaterThan(300);
    const undescribed = all.filter(([, p]) => !p.description).map(([at]) => at);
    expect(undescribed).toEqual([]);
  });

  it('names the API version in its examples as the one it is', () => {
    const versions: string[] = [];
    const look = (node: unknown, inExample: boolean): void => {
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (inExample && key === 'apiVersion') versions.push(String(value));
        if (inExample && key === 'info') versions.push(String((value as { version?: unknown }).version));
        if (!inExample && key === 'apiVersion' && (value as { example?: unknown }).example !== undefined)
          versions.push(String((value as { example: unknown }).example));
        look(value, inExample || key === 'example' || key === 'examples');
      }
    };
    look(served.paths, false);
    look(served.components, false);
    expect(versions.length).toBeGreaterThanOrEqual(3);
    expect(new Set(versions)).toEqual(new Set([(served.info as { version: string }).version]));
  });

  it('gives every scalar property an example (or its only values)', () => {
    const scalar = (p: Schema) =>
      !p.$ref &&
      p.format !== 'binary' &&
      [p.type].flat().some((t) => t === 'string' || t === 'integer' || t === 'number' || t === 'boolean');
    const without = properties()
      .filter(([, p]) => scalar(p) && p.example === undefined && !p.examples && !p.enum && p.const === undefined)
      .map(([at]) => at);
    expect(without).toEqual([]);
  });

  it("links each operation to its area's section of the guide, which the server serves", async () => {
    const links = new Set<string>();
    for (const item of Object.values(served.paths))
      for (const op of Object.values(item as Record<string, { operationId?: string; externalDocs?: { url: string } }>))
        if (op.operationId) {
          expect(op.externalDocs?.url, op.operationId).toMatch(/^https:\/\/shipyard\.dev\/docs\/guide#[a-z0-9-]+$/);
          links.add(op.externalDocs!.url.split('#')[1]!);
        }
    expect(links.size).toBe((served.tags as unknown[]).length);
    const t = await startServer({ publicUrlAtItsPort: true });
    try {
      const page = await fetch(`${t.baseUrl}/docs/guide`);
      expect(page.status).toBe(200);
      const text = await page.text();
      for (const id of links) expect(text, id).toContain(`id="${id}"`);
      // The repository's other files are not served: their links are plain text.
      expect(text).not.toContain('href="mcp.md"');
      // Its examples name this server, wherever it runs, not the default port.
      expect(text).toContain(`SHIPYARD_URL=http://localhost:${new URL(t.baseUrl).port}`);
      expect(text).not.toContain('localhost:3000');
    } finally {
      await t.close();
    }
  });

  it('names where to write and the terms, as URLs', () => {
    const info = served.info as { contact: unknown; license: unknown };
    expect(info.contact).toMatchObject({ name: expect.any(String), url: expect.stringMatching(/^https:/) });
    expect(info.license).toMatchObject({ url: expect.stringMatching(/^https:/) });
  });
});
