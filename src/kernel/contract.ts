/**
 * The bundled contract, loaded once: the document the validator matches against, the server
 * serves and the scope checks read. It is the generated codegen/generated/openapi.json, so the
 * running server and the generated types always come from the same document.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isScopeId, type ScopeId } from './scopes.js';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

export type OperationObject = {
  operationId?: string;
  summary?: string;
  description?: string;
  'x-required-scope'?: string;
  'x-session-only'?: boolean;
  'x-public'?: boolean;
  'x-mcp'?: boolean;
  /** Units of the rate-limit budgets a request spends (1 when absent). */
  'x-cost'?: number;
  [key: string]: unknown;
};
export type ScopeEntry = { id: ScopeId; label: string; description: string; opens: string[] };
export type OpenApiDocument = {
  openapi: string;
  servers?: { url: string; variables?: Record<string, { default: string }> }[];
  paths: Record<string, Partial<Record<HttpMethod, OperationObject>> & Record<string, unknown>>;
  'x-scopes': ScopeEntry[];
  [key: string]: unknown;
};

export type Operation = {
  operationId: string;
  method: HttpMethod;
  /** The path as the spec writes it, e.g. /projects/{projectId} (under the base path). */
  path: string;
  access: { kind: 'scope'; scope: ScopeId } | { kind: 'session-only' } | { kind: 'public' } | { kind: 'mcp' };
};

/** An operation of the contract as it is written: its path, its method, the operation and the path's item. */
export type WrittenOperation = {
  path: string;
  method: HttpMethod;
  op: OperationObject;
  item: OpenApiDocument['paths'][string];
};

/** Every operation the contract writes, path by path in its order, methods in HTTP_METHODS' order. */
export function* eachOperation(doc: OpenApiDocument): Generator<WrittenOperation> {
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const method of HTTP_METHODS) {
      const op = item?.[method];
      if (op) yield { path, method, op, item };
    }
}

const bundleFile = fileURLToPath(new URL('../../codegen/generated/openapi.json', import.meta.url));

export function loadContract(): OpenApiDocument {
  return JSON.parse(readFileSync(bundleFile, 'utf8')) as OpenApiDocument;
}

/**
 * Every operation with its access rule. Fails closed: an operation with neither a known scope
 * tag nor an explicit session-only / public marking stops the boot.
 */
export function listOperations(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  const problems: string[] = [];
  for (const { path, method, op } of eachOperation(doc)) {
    const name = `${method.toUpperCase()} ${path}`;
    if (!op.operationId) {
      problems.push(`${name} has no operationId`);
      continue;
    }
    const scope = op['x-required-scope'];
    let access: Operation['access'] | undefined;
    if (op['x-public'] === true && scope === undefined) access = { kind: 'public' };
    else if (op['x-session-only'] === true && scope === undefined) access = { kind: 'session-only' };
    else if (op['x-mcp'] === true && scope === undefined) access = { kind: 'mcp' };
    else if (typeof scope === 'string' && isScopeId(scope)) access = { kind: 'scope', scope };
    if (!access) {
      problems.push(
        `${name} (${op.operationId}) has no valid x-required-scope and is not marked x-session-only, x-public or x-mcp`,
      );
      continue;
    }
    ops.push({ operationId: op.operationId, method, path, access });
  }
  if (problems.length)
    throw new Error(`Refusing to start: the contract has unguarded operations:\n  ${problems.join('\n  ')}`);
  return ops;
}

/**
 * The rules an operation's JSON request body states about the object as a whole (its fields
 * being each checked on their own): how many fields it needs at least, and which fields need
 * others. An MCP tool that takes the body's fields beside its path parameters keeps these.
 */
export type ObjectRules = { fields: string[]; minProperties?: number; dependentRequired?: Record<string, string[]> };

export function objectRules(doc: OpenApiDocument, operationId: string): ObjectRules | undefined {
  const op = [...eachOperation(doc)].find((o) => o.op.operationId === operationId)?.op;
  const schema = op && schemaResolver(doc)(jsonBodySchema(op));
  if (!schema || (schema.minProperties === undefined && schema.dependentRequired === undefined)) return undefined;
  return {
    fields: Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {}),
    ...(typeof schema.minProperties === 'number' ? { minProperties: schema.minProperties } : {}),
    ...(schema.dependentRequired ? { dependentRequired: schema.dependentRequired as Record<string, string[]> } : {}),
  };
}

/** The schema of an operation's JSON request body, as written (it may be a `$ref`). */
export function jsonBodySchema(op: OperationObject): Record<string, unknown> | undefined {
  const content = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  return content?.['application/json']?.schema as Record<string, unknown> | undefined;
}

/**
 * Follows a schema's `$ref`s to the components' schemas (a few hops at most, so a loop ends):
 * the schema itself, or undefined where a reference leads nowhere.
 */
export function schemaResolver(doc: OpenApiDocument): (schema: unknown) => Record<string, unknown> | undefined {
  const schemas = (doc.components as { schemas?: Record<string, Record<string, unknown>> } | undefined)?.schemas ?? {};
  return (schema) => {
    let s = schema as Record<string, unknown> | undefined;
    for (let hops = 0; typeof s?.$ref === 'string' && hops < 10; hops++) {
      const ref = s.$ref as string;
      s = ref.startsWith('#/components/schemas/') ? schemas[ref.slice('#/components/schemas/'.length)] : undefined;
    }
    return s;
  };
}

/**
 * The scopes of the MCP endpoint, from its operation's `x-mcp-scopes`: a key must hold at least
 * one to be let in, and together they are the scopes of its tools (src/mcp/kit/tool.ts `bindTools` checks that
 * at start).
 */
export function mcpScopes(doc: OpenApiDocument): ScopeId[] {
  for (const { op } of eachOperation(doc)) {
    const scopes = op['x-mcp-scopes'];
    if (op['x-mcp'] !== true) continue;
    if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s) => isScopeId(String(s))))
      throw new Error('the MCP operation must name its scopes, known ones, in x-mcp-scopes');
    return scopes as ScopeId[];
  }
  throw new Error('the contract has no MCP operation (x-mcp)');
}

/** The `limit` parameter every list takes: its default and its maximum page size. */
export function pageSize(doc: OpenApiDocument): { default: number; max: number } {
  const limit = (doc.components as { parameters: Record<string, { schema: { default: number; maximum: number } }> })
    .parameters.Limit!.schema;
  return { default: limit.default, max: limit.maximum };
}

/** The built contract, read once at start: what the server serves unless given another (tests). */
export const SERVED: OpenApiDocument = loadContract();

/** The MCP endpoint's scopes in the served contract. */
export const MCP_SCOPES: readonly ScopeId[] = mcpScopes(SERVED);

/** The page size of every list in the served contract. */
export const PAGE_SIZE = pageSize(SERVED);

/**
 * Refuses a contract (a test's, bent) whose MCP scopes or page size differ from the served
 * contract's: the MCP tools, the key screens and the lists read those from the bundle itself.
 */
export function servedAsBuilt(doc: OpenApiDocument): void {
  const scopes = mcpScopes(doc);
  const page = pageSize(doc);
  if (scopes.join(' ') !== MCP_SCOPES.join(' ') || page.default !== PAGE_SIZE.default || page.max !== PAGE_SIZE.max)
    throw new Error('this contract changes x-mcp-scopes or the page size, which are read from the built contract');
}

/** The rows a list's default page reads: its items, and one more that tells whether another page follows. */
export const DEFAULT_PAGE_ROWS = PAGE_SIZE.default + 1;

/** How many items a list returns: the `limit` asked for, else the contract's default. */
export const pageLimit = (limit: number | undefined): number => limit ?? PAGE_SIZE.default;

/** The path every operation is under: the first server's URL with its variables at their defaults. */
export function basePath(doc: OpenApiDocument): string {
  const server = doc.servers?.[0];
  const url = (server?.url ?? '/').replace(/\{(\w+)\}/g, (_, name: string) => server?.variables?.[name]?.default ?? '');
  return new URL(url, 'http://x').pathname.replace(/\/$/, '');
}

/** Where the served contract's operations are (`/api/v1`): the paths answers point to are built on it. */
export const API_BASE = basePath(SERVED);

/** Units of the rate-limit budgets one request of the operation spends. */
export const costOf = (op: OperationObject | undefined): number => op?.['x-cost'] ?? 1;

/** The operations that cost more than one unit, by operationId (published by GET /platform/limits). */
export function operationCosts(doc: OpenApiDocument): Record<string, number> {
  const costs: Record<string, number> = {};
  for (const { op } of eachOperation(doc)) if (op.operationId && costOf(op) !== 1) costs[op.operationId] = costOf(op);
  return costs;
}

/**
 * What each pattern of the contract means, in words (`x-pattern-message` beside a `pattern`):
 * a 400 says that instead of the pattern itself. The generated zod schemas (the MCP tools'
 * inputs) carry the same words.
 */
export function patternMessages(doc: OpenApiDocument): Map<string, string> {
  const messages = new Map<string, string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (typeof schema.pattern === 'string' && typeof schema['x-pattern-message'] === 'string')
      messages.set(schema.pattern, schema['x-pattern-message']);
    for (const value of Object.values(schema)) visit(value);
  };
  visit(doc.paths);
  visit(doc.components);
  return messages;
}

/**
 * The contract as the server holds its own answers to it. The served contract leaves response
 * objects open (a client must not break when a field is added), while the server must never send
 * a field the contract does not name: it validates against this copy, in which every object
 * schema that names its properties and says nothing of others is closed. Request schemas are
 * closed in the contract itself (an unknown body field is a 400), so they are unchanged.
 */
export function closedForValidation(doc: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(doc);
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (node === null || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (
      schema.properties &&
      typeof schema.properties === 'object' &&
      !('additionalProperties' in schema) &&
      !('unevaluatedProperties' in schema)
    ) {
      schema.additionalProperties = false;
    }
    for (const [key, value] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') close(value);
  };
  close(copy.paths);
  close(copy.components);
  return copy;
}
