/**
 * The breaking-change gate (`make check-breaking`): the current contract against the released
 * one (openapi/released/v1.json), compared by api-smart-diff operation by operation (references
 * resolved, so each change is judged where it is used: in a request, a response or a parameter).
 * The `webhooks` are compared too, from their receiver's side: a payload is what a receiver
 * reads, so it is judged as a response is (a field removed or retyped breaks a receiver).
 *
 * It fails when a change it classifies as breaking is not accepted in docs/api-changes.md under
 * the current `info.version`, in the "Breaking" list, as `<add|remove|replace|rename> <pattern>`
 * followed by the reason (the pattern is a JSON Pointer in which `*` stands for one segment and
 * `**` for any number); when an accepted pattern matches nothing (a stale entry); and when the
 * contract changed but `info.version` did not move past the released one, or has no entry; and when
 * the changelog dates `info.version` as released (`## 1.2.0 — 2026-11-26`, not `— unreleased`)
 * while the released contract is another version: the baseline would be stale, and every break
 * since that release would pass unseen.
 *
 * `make release-contract` (`--release`) makes the current contract the released one, once it
 * passes.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiCompare } from 'api-smart-diff';
import { pointerPattern } from '../src/kernel/pointer-pattern.js';

type Doc = { info: { version: string; [key: string]: unknown }; paths: object; [key: string]: unknown };
export type Change = { action: string; type: string; pointer: string; description: string };
export type Accepted = { action: string; pattern: string; reason: string };

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Every change between the two contracts that is not documentation alone, with the JSON Pointer
 * of where it is and its class: `breaking`, `non-breaking`, `deprecated` or `unclassified`.
 * Component schemas, responses, parameters and headers are judged where an operation uses them
 * (api-smart-diff resolves references), so they are not counted twice.
 */
export function changes(released: Doc, current: Doc): Change[] {
  const compared = asReceived(enumsAsListed(withoutDocumentation(current)));
  const { diffs } = apiCompare(asReceived(enumsAsListed(withoutDocumentation(released))), compared);
  return diffs
    .filter((d) => !(d.path[0] === 'components' && d.path[1] !== 'securitySchemes'))
    .map((d) => ({
      action: d.action,
      type: classify(d, compared),
      pointer: webhookPointer(`/${d.path.map((s) => escapePointer(String(s))).join('/')}`),
      description: d.description ?? '',
    }))
    .filter((c) => c.type !== 'annotation');
}

/**
 * `doc` with each open enum as the list it is (`type: string`, `enum`, `x-open-enum`), whichever
 * form the contract writes it in: `anyOf` the values it lists (`Known<Name>`) and any string, the
 * form generators keep open (codegen/bundle.ts). Its values are then compared one by one: one
 * added is compatible (the enum said it would grow), one removed or renamed is a break.
 */
function enumsAsListed(doc: Doc): Doc {
  const schemas = (doc.components as { schemas?: Record<string, Record<string, unknown>> } | undefined)?.schemas;
  if (!schemas) return doc;
  const listed = { ...schemas };
  for (const [name, schema] of Object.entries(schemas)) {
    const anyOf = schema.anyOf as { $ref?: string }[] | undefined;
    const known = anyOf?.[0]?.$ref?.split('/').pop();
    if (schema['x-open-enum'] !== true || !known || !schemas[known]?.enum) continue;
    const { anyOf: _anyOf, ...rest } = schema;
    listed[name] = { ...rest, type: 'string', enum: schemas[known].enum };
  }
  return { ...doc, components: { ...(doc.components as object), schemas: listed } };
}

/** The prefix of the path each webhook is compared under (no real path has a colon in its first segment). */
const WEBHOOK_PATH = '/webhook:';

/**
 * `doc` with each webhook as an operation whose answer is the event: its payload the response's
 * body, its signed headers the response's headers. api-smart-diff then resolves the references
 * in a payload (it does not under `webhooks`) and judges each change from the side that reads
 * it, the receiver's.
 */
function asReceived(doc: Doc): Doc {
  type Parameter = { name: string; in: string; required?: boolean; schema?: unknown };
  type Hook = {
    operationId?: string;
    deprecated?: boolean;
    parameters?: Parameter[];
    requestBody?: { content?: object };
  };
  const { webhooks, ...rest } = doc as Doc & { webhooks?: Record<string, Record<string, Hook>> };
  const paths: Record<string, unknown> = { ...(doc.paths as Record<string, unknown>) };
  for (const [name, item] of Object.entries(webhooks ?? {})) {
    const received: Record<string, unknown> = {};
    for (const [method, op] of Object.entries(item)) {
      const headers = Object.fromEntries(
        (op.parameters ?? [])
          .filter((p) => p.in === 'header')
          .map((p) => [p.name, { required: p.required, schema: p.schema }]),
      );
      received[method] = {
        operationId: op.operationId,
        ...(op.deprecated !== undefined ? { deprecated: op.deprecated } : {}),
        responses: { '200': { description: '', headers, content: op.requestBody?.content ?? {} } },
      };
    }
    paths[`${WEBHOOK_PATH}${name}`] = received;
  }
  return { ...rest, paths };
}

/** A pointer into a webhook, as its receiver reads it: `/webhooks/<event>/post/payload/…`, `…/headers/<name>`. */
function webhookPointer(pointer: string): string {
  const prefix = `/paths/${escapePointer(WEBHOOK_PATH)}`;
  if (!pointer.startsWith(prefix)) return pointer;
  return `/webhooks/${pointer.slice(prefix.length)}`
    .replace(/\/responses\/200\/content\/[^/]+\/schema(?=\/|$)/, '/payload')
    .replace(/\/responses\/200\/headers\//, '/headers/');
}

/** The keywords that only document: no change to them can break a client. */
const DOCUMENTATION = new Set(['description', 'summary', 'example', 'examples', 'externalDocs']);
/** The keywords whose value is a map keyed by names (a field, a header, a component may be called `description`). */
const NAMED = new Set([
  'properties',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  '$defs',
  'definitions',
  'mapping',
  'encoding',
  'headers',
  'schemas',
  'parameters',
  'responses',
  'requestBodies',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
]);
/** Whether `key: value` only documents (a description is a string: an object there is something else). */
const documents = (key: string, value: unknown) =>
  key === 'description' || key === 'summary' ? typeof value === 'string' : DOCUMENTATION.has(key);

/**
 * `doc` without its documentation keywords (a field or header that happens to be called
 * `description` stays). api-smart-diff reads a `$ref` with a sibling `description` (OpenAPI
 * 3.1) as a schema of its own, not as the schema it refers to: describing a property that way
 * would read as every field of that schema removed.
 */
function withoutDocumentation<T>(node: T, names = false): T {
  if (Array.isArray(node)) return node.map((n) => withoutDocumentation(n)) as T;
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => names || !documents(key, value))
      .map(([key, value]) => [key, withoutDocumentation(value, !names && NAMED.has(key))]),
  ) as T;
}

type Diff = { action: string; type: string; path: (string | number)[] };

/**
 * This API's rules where api-smart-diff's classification falls short: it reads the document's
 * top level and the `x-` extensions as documentation, and a type replaced in a response as
 * compatible.
 */
function classify(d: Diff, current: Doc): string {
  const last = String(d.path.at(-1));
  const whole = d.path.length === 2 + Number(d.path[0] === 'components');
  if (last === 'description' || last === 'summary') return d.type;
  switch (d.path[0]) {
    // Where clients send their requests, and how they authenticate: a new alternative is
    // compatible, any other change sends a working client elsewhere or refuses its key.
    case 'servers':
    case 'security':
    case 'components':
      return d.action === 'add' && whole ? 'non-breaking' : 'breaking';
    case 'paths':
    case 'webhooks':
      break;
    default:
      return d.type;
  }
  if (last in EXTENSIONS) return EXTENSIONS[last]!(d.action);
  // The SDK's method is named after the operationId.
  if (last === 'operationId') return d.action === 'add' ? 'non-breaking' : 'breaking';
  if (last === 'type' && d.action === 'replace') return 'breaking';
  // `additionalProperties: true` says what an object without the keyword already allows.
  if (last === 'additionalProperties' && d.action === 'add' && (schemaAt(current, d.path) as unknown) === true)
    return 'non-breaking';
  // A field removed, optional or not, from an answer (a client reads it) or from a request (the
  // request objects are closed: a client that still sends it is refused).
  if (d.action === 'remove' && d.path.at(-2) === 'properties' && d.type !== 'annotation') return 'breaking';
  // A value that goes or is renamed: a client that sends it is refused, one that reads it never
  // sees it again (api-smart-diff calls that compatible in an answer).
  if (d.path.at(-2) === 'enum' && (d.action === 'remove' || d.action === 'replace')) return 'breaking';
  // A header a client could count on, in an answer or an event, that may now be missing.
  if (
    last === 'required' &&
    d.path.at(-3) === 'headers' &&
    d.path.includes('responses') &&
    (schemaAt(current, d.path) as unknown) !== true
  )
    return 'breaking';
  // A field an answer (or an event's payload) now carries, or now always carries: a client reads
  // more than before, and ignores a field it does not know (api-smart-diff calls a new required
  // one in an answer breaking, as it would be in a request).
  if (
    d.action === 'add' &&
    d.path[0] === 'paths' &&
    d.path[3] === 'responses' &&
    d.path[5] === 'content' &&
    (d.path.at(-2) === 'required' || d.path.at(-2) === 'properties')
  )
    return 'non-breaking';
  // A value a client has never seen, in an answer: breaking unless the enum says it will grow.
  if (d.action === 'add' && d.path.at(-2) === 'enum' && d.path.includes('responses'))
    return schemaAt(current, d.path.slice(0, -2))?.['x-open-enum'] === true ? 'non-breaking' : 'breaking';
  return d.type;
}

/** How a change to each of the contract's own extensions on an operation is classed. */
const EXTENSIONS: Record<string, (action: string) => string> = {
  // A key that was enough is refused (403), or one that was not is taken: either changes who may call.
  'x-required-scope': () => 'breaking',
  'x-session-only': (action) => (action === 'remove' ? 'non-breaking' : 'breaking'),
  'x-public': (action) => (action === 'add' ? 'non-breaking' : 'breaking'),
};

/** The node at `path` in `doc`, following local references on the way (as api-smart-diff resolves them). */
function schemaAt(doc: Doc, path: (string | number)[]): Record<string, unknown> | undefined {
  let node: unknown = doc;
  for (const segment of path) {
    node = deref(doc, node);
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return deref(doc, node) as Record<string, unknown> | undefined;
}

function deref(doc: Doc, node: unknown): unknown {
  for (let hops = 0; hops < 32; hops++) {
    const ref = (node as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
    node = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((n, s) => (n as Record<string, unknown> | undefined)?.[s], doc);
  }
  return node;
}

/**
 * The "Breaking" entries of a version's section of the changelog, and its "Deprecated" ones
 * (`deprecate <pattern>` followed by what to use instead).
 */
export function acceptedIn(
  changelog: string,
  version: string,
): { found: boolean; accepted: Accepted[]; deprecations: Accepted[] } {
  const sections = changelog.split(/^## /m).slice(1);
  const section = sections.find((s) => s.startsWith(`${version} `) || s.startsWith(`${version}\n`));
  if (!section) return { found: false, accepted: [], deprecations: [] };
  const entries = (heading: RegExp, actions: string) => {
    const list = section.split(/^### /m).find((s) => heading.test(s)) ?? '';
    return [...list.matchAll(new RegExp(`^- \`(${actions}) ([^\`]+)\`\\s*[—–-]\\s*(.+)$`, 'gm'))].map((m) => ({
      action: m[1]!,
      pattern: m[2]!,
      reason: m[3]!.trim(),
    }));
  };
  return {
    found: true,
    accepted: entries(/^Breaking/, 'add|remove|replace|rename'),
    deprecations: entries(/^Deprecated/, 'deprecate'),
  };
}

const newer = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return (x![i] ?? 0) > (y![i] ?? 0);
  return false;
};

/** Whether the changelog dates `version` as released (`## 1.2.0 — 2026-11-26`), rather than `— unreleased` or not at all. */
export function releasedIn(changelog: string, version: string): boolean {
  const escaped = version.replace(/\./g, '\\.');
  return new RegExp(`^## ${escaped}\\s+[—–-]\\s+\\d{4}-\\d{2}-\\d{2}\\s*$`, 'm').test(changelog);
}

/** What stops the current contract from passing the gate (empty when it passes). */
export function gate(released: Doc, current: Doc, changelog: string, { releasing = false } = {}): string[] {
  const version = current.info.version;
  const stale =
    !releasing && releasedIn(changelog, version) && released.info.version !== version
      ? [
          `docs/api-changes.md dates ${version} as released, but openapi/released/v1.json holds ${released.info.version}: ` +
            'run `make release-contract` with that release (or mark its section `— unreleased`)',
        ]
      : [];
  const all = changes(released, current);
  if (all.length === 0) return stale;
  const problems: string[] = [...stale];
  if (!newer(version, released.info.version))
    problems.push(
      `the contract changed but info.version is still ${version} (released: ${released.info.version}): move it on, by semver`,
    );
  const { found, accepted, deprecations } = acceptedIn(changelog, version);
  if (!found) problems.push(`docs/api-changes.md has no section "## ${version} — <date>" for this contract`);
  const used = new Set<Accepted>();
  for (const change of all.filter((c) => c.type === 'breaking')) {
    const match = accepted.find((a) => a.action === change.action && pointerPattern(a.pattern).test(change.pointer));
    if (match) used.add(match);
    else
      problems.push(
        `breaking, not accepted in the changelog: ${change.action} ${change.pointer} (${change.description || 'no description'})`,
      );
  }
  // A deprecation is a promise with a date: the changelog says what to use instead.
  for (const change of all.filter((c) => c.type === 'deprecated' && c.action !== 'remove')) {
    const what = change.pointer.replace(/\/deprecated$/, '');
    const match = deprecations.find((a) => pointerPattern(a.pattern).test(what));
    if (match) used.add(match);
    else
      problems.push(
        `deprecated, with no entry in the changelog: add "- \`deprecate ${what}\` — what to use instead" under "### Deprecated"`,
      );
  }
  for (const a of [...accepted, ...deprecations])
    if (!used.has(a))
      problems.push(`the changelog lists \`${a.action} ${a.pattern}\`, which matches no change of its kind: remove it`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), '../..');
  const releasedFile = resolve(root, 'openapi/released/v1.json');
  const currentFile = resolve(root, 'codegen/generated/openapi.json');
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Doc;
  const problems = gate(
    read(releasedFile),
    read(currentFile),
    readFileSync(resolve(root, 'docs/api-changes.md'), 'utf8'),
    { releasing: process.argv.includes('--release') },
  );
  if (problems.length) {
    process.stderr.write(`check-breaking: the contract cannot ship as it is:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  if (process.argv.includes('--release')) {
    copyFileSync(currentFile, releasedFile);
    process.stdout.write(`released contract ${read(currentFile).info.version} -> openapi/released/v1.json\n`);
  } else {
    process.stdout.write('check-breaking: every change is compatible or accepted in docs/api-changes.md\n');
  }
}
