/**
 * Bundles the split contract in openapi/ into one self-contained document.
 *
 * Convention: a `$ref` into `openapi/components/<kind>.yaml#/<Name>` becomes
 * `#/components/<kind>/<Name>` (and the whole components file is carried over); any other
 * external `$ref` (the path items in openapi/paths/) is inlined. The result is deterministic,
 * committed as codegen/generated/openapi.json, and is the single document the server validates
 * against, serves and generates code from.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve, relative, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { headingId } from '../src/kernel/heading-id.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const specDir = resolve(root, 'openapi');
const componentsDir = resolve(specDir, 'components');
export const bundlePath = resolve(root, 'codegen/generated/openapi.json');

const fileCache = new Map<string, Json>();
function load(file: string): Json {
  let doc = fileCache.get(file);
  if (doc === undefined) {
    doc = YAML.parse(readFileSync(file, 'utf8')) as Json;
    fileCache.set(file, doc);
  }
  return doc;
}

function pointer(doc: Json, ptr: string, where: string): Json {
  let node: Json = doc;
  for (const raw of ptr.split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`unresolved $ref ${where}`);
    node = (node as JsonObject)[key]!;
  }
  return node;
}

function componentKind(file: string): string | undefined {
  return relative(componentsDir, file).startsWith('..') ? undefined : basename(file, '.yaml');
}

const used = new Map<string, Set<string>>(); // kind -> names referenced

function resolveNode(node: Json, file: string): Json {
  if (Array.isArray(node)) return node.map((n) => resolveNode(n, file));
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    const [target = '', ptr = ''] = ref.split('#');
    const targetFile = target ? resolve(dirname(file), target) : file;
    const kind = componentKind(targetFile);
    if (kind) {
      const name = ptr.replace(/^\//, '');
      pointer(load(targetFile), ptr, `${ref} in ${relative(root, file)}`);
      if (!used.has(kind)) used.set(kind, new Set());
      used.get(kind)!.add(name);
      const siblings = Object.fromEntries(Object.entries(node).filter(([k]) => k !== '$ref'));
      return { $ref: `#/components/${kind}/${name}`, ...resolveObject(siblings, file) };
    }
    if (!target) throw new Error(`local $ref ${ref} outside components in ${relative(root, file)}`);
    return resolveNode(pointer(load(targetFile), ptr, `${ref} in ${relative(root, file)}`), targetFile);
  }
  return resolveObject(node, file);
}

function resolveObject(node: JsonObject, file: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'x-anchors') continue; // YAML anchor holders in the split files, not part of the contract
    out[key] = resolveNode(value, file);
  }
  return out;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const header = (name: string): JsonObject => {
  used.get('headers')?.add(name) ?? used.set('headers', new Set([name]));
  return { $ref: `#/components/headers/${name}` };
};

/**
 * The headers the server sends with every response, written onto each response an operation
 * declares itself (the shared ones in components/responses.yaml list theirs): the request id
 * always; the budgets and the key's expiry once authentication has passed (not on a 401; not the
 * expiry on a public operation); on a create's 201, whether it is a replay; and on every
 * response of a deprecated operation, the deprecation headers (src/http/deprecation.ts).
 */
function declareResponseHeaders(doc: JsonObject): void {
  for (const item of Object.values(doc.paths as JsonObject)) {
    for (const method of METHODS) {
      const op = (item as JsonObject)[method] as JsonObject | undefined;
      if (!op) continue;
      const responses = op.responses as JsonObject;
      const creates = method === 'post' && '201' in responses;
      const deprecated = op.deprecated === true;
      for (const [status, ref] of Object.entries(responses) as [string, JsonObject][]) {
        // A deprecated operation's responses all carry the deprecation headers: its shared ones
        // become copies of their own.
        let response = ref;
        if ('$ref' in ref && deprecated) {
          const name = String(ref.$ref).split('/').pop()!;
          response = structuredClone(
            resolveNode(
              pointer(load(resolve(componentsDir, 'responses.yaml')), `/${name}`, name),
              resolve(componentsDir, 'responses.yaml'),
            ),
          ) as JsonObject;
          responses[status] = response;
        }
        if ('$ref' in response) continue;
        const headers: JsonObject = { 'X-Request-Id': header('XRequestId') };
        if (status !== '401') {
          headers.RateLimit = header('RateLimit');
          headers['RateLimit-Policy'] = header('RateLimitPolicy');
          if (op['x-public'] !== true) headers['Shipyard-Key-Expiration'] = header('ShipyardKeyExpiration');
        }
        if (creates && status === '201') headers['Idempotent-Replayed'] = header('IdempotentReplayed');
        if (deprecated) {
          headers.Deprecation = header('Deprecation');
          headers.Sunset = header('Sunset');
          headers.Link = header('DeprecationLink');
        }
        response.headers = { ...headers, ...((response.headers as JsonObject | undefined) ?? {}) };
      }
    }
  }
}

/**
 * Each operation's 403 (the shared Forbidden response) gets an example of its own: the problem
 * this operation answers to a key without its scope, naming the operation and the scope as the
 * server does (src/http/authenticate.ts), and a key's scopes that plausibly lack it.
 */
function forbiddenExamplesPerOperation(doc: JsonObject): void {
  const file = resolve(componentsDir, 'responses.yaml');
  for (const item of Object.values(doc.paths as JsonObject)) {
    for (const method of METHODS) {
      const op = (item as JsonObject)[method] as JsonObject | undefined;
      const responses = op?.responses as JsonObject | undefined;
      const scope = op?.['x-required-scope'];
      const shared = responses?.['403'] as JsonObject | undefined;
      if (!op || !responses || typeof scope !== 'string' || !shared) continue;
      if ('$ref' in shared && shared.$ref !== '#/components/responses/Forbidden') continue;
      const response = (
        '$ref' in shared ? structuredClone(resolveNode(pointer(load(file), '/Forbidden', 'Forbidden'), file)) : shared
      ) as JsonObject;
      const content = (response.content as JsonObject)['application/problem+json'] as JsonObject;
      const granted = scope.endsWith('.write')
        ? [scope.replace(/\.write$/, '.read')]
        : [scope === 'profile.read' ? 'content.read' : 'profile.read'];
      content.example = {
        ...(content.example as JsonObject),
        detail: `${op.operationId} needs the '${scope}' scope; this key has ${granted.join(', ')}.`,
        requiredScope: scope,
        grantedScopes: granted,
      };
      responses['403'] = response;
    }
  }
  // Every operation now has its own: the shared one is no longer referenced.
  if (!JSON.stringify(doc.paths).includes('"#/components/responses/Forbidden"'))
    used.get('responses')?.delete('Forbidden');
}

/**
 * The ProblemType enum is the contract's catalogue (x-problem-types): each type's URI, with its
 * title, status and meaning as the enum value's description (`x-enumDescriptions`, which the
 * reference shows). One list, not two.
 */
function problemTypesFromCatalogue(doc: JsonObject, components: JsonObject): void {
  const schema = (components.schemas as JsonObject | undefined)?.ProblemType as JsonObject | undefined;
  const catalogue = doc['x-problem-types'] as { slug: string; title: string; status: string; meaning: string }[];
  if (!schema || !catalogue) return;
  const uri = (slug: string) => `/problems/${slug}`;
  schema.enum = catalogue.map((p) => uri(p.slug));
  schema['x-enumDescriptions'] = Object.fromEntries(
    catalogue.map((p) => [uri(p.slug), `${p.title} (${p.status}): ${p.meaning}`]),
  );
  problemCodesFromCatalogues(doc, components, catalogue);
}

/**
 * The ProblemCode enum: each type's slug (the code of a problem with no more specific one), then
 * the contract's specific codes (x-problem-codes), each described with the types it refines.
 */
function problemCodesFromCatalogues(
  doc: JsonObject,
  components: JsonObject,
  types: { slug: string; title: string; status: string }[],
): void {
  const schema = (components.schemas as JsonObject | undefined)?.ProblemCode as JsonObject | undefined;
  const codes = (doc['x-problem-codes'] ?? []) as { code: string; types: string[]; meaning: string }[];
  if (!schema) return;
  const byType = new Map(types.map((t) => [t.slug, t]));
  const refines = (slugs: string[]) =>
    slugs
      .map((slug) => {
        const type = byType.get(slug);
        if (!type)
          throw new Error(`x-problem-codes names the problem type '${slug}', which x-problem-types does not list`);
        return `\`/problems/${slug}\` (${type.status})`;
      })
      .join(', ');
  const entries: [string, string][] = [
    ...types.map((t): [string, string] => [
      t.slug,
      `Any \`/problems/${t.slug}\` (${t.status}) without a more specific code.`,
    ]),
    ...codes.map((c): [string, string] => [c.code, `A ${refines(c.types)}: ${c.meaning}`]),
  ];
  const seen = new Set<string>();
  for (const [code] of entries) {
    if (seen.has(code)) throw new Error(`the problem code '${code}' is listed twice`);
    seen.add(code);
  }
  schema.enum = entries.map(([code]) => code);
  schema['x-enumDescriptions'] = Object.fromEntries(entries);
}

/**
 * Each open enum (`x-open-enum: true`) in a form generators keep open: `anyOf` the values this
 * version lists, as a schema of their own (`Known<Name>`: a client's autocompletion, the server's
 * own types), and any string. A bare `enum` becomes a closed union in openapi-typescript, Orval
 * and hey-api alike, so a value added later would be a type error in a client built today.
 */
function openEnums(components: JsonObject): void {
  const schemas = (components.schemas ?? {}) as JsonObject;
  for (const [name, schema] of Object.entries(schemas) as [string, JsonObject][]) {
    if (schema['x-open-enum'] !== true || !Array.isArray(schema.enum)) continue;
    const { enum: values, 'x-enumDescriptions': meanings, type: _type, example = null, ...rest } = schema;
    schemas[`Known${name}`] = {
      type: 'string',
      description: `The values of \`${name}\` this version of the contract lists.`,
      enum: values,
      ...(meanings ? { 'x-enumDescriptions': meanings } : {}),
      example,
    };
    schemas[name] = {
      ...rest,
      anyOf: [
        { $ref: `#/components/schemas/Known${name}` },
        { type: 'string', description: 'A value a newer server may send, not listed in this version.' },
      ],
      example,
    };
  }
}

/**
 * Each operation links to its area's section of the guide (docs/api.md, served at /docs/guide),
 * whose headings are the contract's tags: one `### <tag>` each, its id the tag's slug.
 */
function guideLinksPerOperation(doc: JsonObject): void {
  for (const item of Object.values(doc.paths as JsonObject)) {
    for (const method of METHODS) {
      const op = (item as JsonObject)[method] as JsonObject | undefined;
      const tag = (op?.tags as string[] | undefined)?.[0];
      if (!op || !tag || op.externalDocs) continue;
      op.externalDocs = {
        description: `${tag}, in the guide`,
        url: `https://shipyard.dev/docs/guide#${headingId(tag)}`,
      };
    }
  }
}

/** The OAuth scheme's scopes are the contract's scopes (x-scopes), each with its label: one list, not two. */
function oauthScopesFromXScopes(doc: JsonObject): void {
  const flows = (((doc.components as JsonObject).securitySchemes as JsonObject).oauth2 as JsonObject | undefined)
    ?.flows as JsonObject | undefined;
  const code = flows?.authorizationCode as JsonObject | undefined;
  if (!code) return;
  const scopes = doc['x-scopes'] as { id: string; label: string }[];
  code.scopes = Object.fromEntries(scopes.map((s) => [s.id, s.label]));
}

export function bundleSpec(): JsonObject {
  fileCache.clear();
  used.clear();
  const rootFile = resolve(specDir, 'openapi.yaml');
  const doc = resolveObject(load(rootFile) as JsonObject, rootFile);
  declareResponseHeaders(doc);
  forbiddenExamplesPerOperation(doc);
  guideLinksPerOperation(doc);
  oauthScopesFromXScopes(doc);
  const components = (doc.components ?? {}) as JsonObject;
  // Carry over every component a reference reached, following references between components.
  const done = new Set<string>();
  for (;;) {
    const pending = [...used]
      .flatMap(([kind, names]) => [...names].map((n) => `${kind}/${n}`))
      .filter((k) => !done.has(k));
    if (pending.length === 0) break;
    for (const key of pending) {
      done.add(key);
      const [kind, name] = key.split('/') as [string, string];
      const file = resolve(componentsDir, `${kind}.yaml`);
      components[kind] ??= {};
      const section = components[kind] as JsonObject;
      section[name] = resolveNode(pointer(load(file), `/${name}`, key), file);
    }
  }
  problemTypesFromCatalogue(doc, components);
  openEnums(components);
  // Deterministic order inside each section.
  for (const kind of Object.keys(components)) {
    const section = components[kind] as JsonObject;
    components[kind] = Object.fromEntries(
      Object.keys(section)
        .sort()
        .map((k) => [k, section[k]!]),
    );
  }
  doc.components = components;
  return doc;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const doc = bundleSpec();
  mkdirSync(dirname(bundlePath), { recursive: true });
  writeFileSync(bundlePath, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`bundled ${Object.keys(doc.paths as JsonObject).length} paths -> ${relative(root, bundlePath)}`);
}
