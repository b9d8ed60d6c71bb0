import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { patternMessages, SERVED } from '../kernel/contract.js';
import { LINE_PATTERN, linePaths, notLinesAt, type LinePath } from '../kernel/text.js';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { answerAjv, mismatchText } from '../http/kit/answer-ajv.js';
import { bindTools, type BoundTool } from './kit/tool.js';
import type { ObjectRules } from '../kernel/contract.js';
import { projectsTools } from '../projects/projects.tools.js';
import { milestonesTools } from '../milestones/milestones.tools.js';
import { postsTools } from '../posts/posts.tools.js';

/** Each tool with the scope of the REST operation it mirrors, read from the contract. */
export const TOOLS: readonly BoundTool[] = bindTools([...projectsTools, ...milestonesTools, ...postsTools], SERVED);
export const BY_NAME: ReadonlyMap<string, BoundTool> = new Map(TOOLS.map((t) => [t.name, t]));
export const TOOL_NAMES: ReadonlySet<string> = new Set(BY_NAME.keys());

const idempotencyKeyInput = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/)
  .describe(
    'Optional. Send the same key when you retry this call: the first result is returned instead of creating it twice (kept 24 hours).',
  );
const INPUTS = new WeakMap<BoundTool, z.ZodObject>();
/**
 * A tool's input schema, built once per tool: creates also take an idempotencyKey. Closed, as the
 * contract's request bodies are: an argument the tool does not take (a misspelt name, a
 * `__proto__`) is refused by name, never dropped.
 */
export function inputOf(tool: BoundTool): z.ZodObject {
  let input = INPUTS.get(tool);
  if (!input) {
    input = (
      tool.creates ? tool.input.extend({ idempotencyKey: idempotencyKeyInput.optional() }) : tool.input
    ).strict();
    if (tool.bodyRules) input = input.superRefine(keepsBodyRules(tool.bodyRules));
    const lines = linePaths(z.toJSONSchema(tool.input, { io: 'input' }));
    if (lines.length) input = input.superRefine(keepsLines(lines));
    INPUTS.set(tool, input);
  }
  return input;
}

/** The validator of the tools' results: the one REST's answers are checked with (VALIDATE_RESPONSES). */
let outputAjv: Ajv2020 | undefined;
const OUTPUT_CHECKS = new WeakMap<BoundTool, ValidateFunction>();

/**
 * What is wrong with `data` as `tool`'s result, or nothing: checked against the whole of its
 * output schema (formats, lengths and patterns included, which the schema a client is shown leaves
 * out), compiled once per tool to a JSON Schema validator, as REST's answers are checked. Its
 * objects are open, as the contract's are (compact).
 */
export function outputMismatch(tool: BoundTool, data: unknown): string | undefined {
  let check = OUTPUT_CHECKS.get(tool);
  if (!check) {
    outputAjv ??= answerAjv();
    check = outputAjv.compile(z.toJSONSchema(tool.output, { io: 'output', override: forTheCheck }) as object);
    OUTPUT_CHECKS.set(tool, check);
  }
  return check(data) ? undefined : mismatchText(check.errors);
}

/**
 * Each node of an output schema as the check reads it: a URL keeps its `format: uri`, which zod
 * leaves out when the URL also has a pattern of its own (the contract's links: `^https?://`), so
 * a link with a space is refused; and an object is open (no `additionalProperties: false`): a
 * result's objects may hold more than the schema names.
 */
const forTheCheck = ({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Record<string, unknown> }) => {
  if (zodSchema instanceof z.ZodURL) jsonSchema.format = 'uri';
  if (jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
};

/** What the contract says of a line that breaks its rule (its `x-pattern-message`). */
const LINE_MESSAGE =
  patternMessages(SERVED).get(LINE_PATTERN) ?? 'must be one line with at least one visible character';

/**
 * One-line arguments hold something visible by Unicode's properties, in every plane: the
 * pattern zod checks can name characters of the basic plane only (src/kernel/text.ts).
 */
const keepsLines =
  (lines: LinePath[]) => (args: Record<string, unknown>, ctx: z.RefinementCtx<Record<string, unknown>>) => {
    for (const pointer of notLinesAt(args, lines))
      ctx.addIssue({ code: 'custom', path: pointer.split('/').slice(1), message: LINE_MESSAGE });
  };

/** The operation's object rules (src/kernel/contract.ts `objectRules`) over the body fields among a tool's arguments. */
const keepsBodyRules =
  (rules: ObjectRules) => (args: Record<string, unknown>, ctx: z.RefinementCtx<Record<string, unknown>>) => {
    const sent = rules.fields.filter((f) => args[f] !== undefined);
    if (rules.minProperties !== undefined && sent.length < rules.minProperties)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `send at least ${rules.minProperties === 1 ? 'one' : rules.minProperties} of ${rules.fields.join(', ')}`,
      });
    for (const [field, needs] of Object.entries(rules.dependentRequired ?? {}))
      if (args[field] !== undefined)
        for (const other of needs.filter((n) => args[n] === undefined))
          ctx.addIssue({ code: 'custom', path: [], message: `${other} is required when ${field} is sent` });
  };
/** Formats that say all a pattern or a length would: zod writes its own long regular expression beside each. */
const FORMATS_WITHOUT_PATTERN = new Set(['uuid', 'date', 'date-time']);
/**
 * What an output schema leaves out: limits and formats of what the server itself writes, which no
 * client acts on, and the fields' prose. A program reads output schemas (it has the contract, where every
 * field is described); a model pays for them on every turn, and reads the data in the text block.
 */
const OUTPUT_LEAVES_OUT = [
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'format',
  'description',
];

/**
 * A JSON Schema as an agent's context pays for it: a `pattern` dropped where the `format` beside it
 * states the same, a lone reference (`allOf: [{ $ref }]`) written as the reference, and for an
 * output schema, no length, pattern, range or format and no descriptions (the types, required
 * fields and enums stay, and the server checks its answers against the full schema:
 * VALIDATE_RESPONSES).
 */
function compact(node: unknown, output: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, output));
  if (node === null || typeof node !== 'object') return node;
  const entries = Object.entries(node).map(([k, v]) => [
    k,
    k === 'properties' || k === 'definitions' ? compactEach(v, output) : compact(v, output),
  ]);
  const schema = Object.fromEntries(entries) as Record<string, unknown>;
  // A uuid or a date is as long as its format says: a length limit beside it says nothing more.
  if (typeof schema.format === 'string' && FORMATS_WITHOUT_PATTERN.has(schema.format)) {
    delete schema.pattern;
    delete schema.maxLength;
  }
  // An array's items need no description of their own when the array has one.
  const items = schema.items as Record<string, unknown> | undefined;
  if (typeof schema.description === 'string' && items && typeof items === 'object' && 'description' in items)
    schema.items = Object.fromEntries(Object.entries(items).filter(([k]) => k !== 'description'));
  // The one-line rule is a long pattern that still cannot say it all (src/kernel/text.ts): the
  // argument's description says "one line", and the server checks it.
  if (schema.pattern === LINE_PATTERN) delete schema.pattern;
  if (output) for (const key of OUTPUT_LEAVES_OUT) delete schema[key];
  // An answer's objects are open, as the contract's are: a client ignores a field it does not know.
  if (output && schema.additionalProperties === false) delete schema.additionalProperties;
  delete schema.$schema; // draft-7 is what MCP clients assume
  const { allOf, ...rest } = schema;
  if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(rest).length === 0) return allOf[0];
  return orNull(output ? openUnion(schema) : schema);
}

const bareType = (s: Record<string, unknown>) => Object.keys(s).length === 1 && typeof s.type === 'string';

/**
 * An output's union as few branches as say it: nested unions flattened, and a branch that any
 * value of its type satisfies taking the place of the others of that type. An open enum (the
 * values listed, or any string) is then a string, which is all a client may rely on.
 */
function openUnion(schema: Record<string, unknown>): Record<string, unknown> {
  const { anyOf, ...rest } = schema;
  if (!Array.isArray(anyOf)) return schema;
  const flat = (anyOf as Record<string, unknown>[]).flatMap((b) =>
    Array.isArray(b.anyOf) && Object.keys(b).length === 1 ? (b.anyOf as Record<string, unknown>[]) : [b],
  );
  const bare = new Set(flat.filter(bareType).map((b) => b.type));
  const kept = flat.filter((b, i) =>
    bareType(b)
      ? flat.findIndex((o) => bareType(o) && o.type === b.type) === i
      : !(typeof b.type === 'string' && bare.has(b.type)),
  );
  if (kept.length === 1) return { ...kept[0], ...rest };
  return { ...rest, anyOf: kept };
}

/**
 * An output schema to the depth a client acts on: the resource (the answer, or each item of a
 * list) with each field and its type, and an object inside it (or each of a list of them) as an
 * object, its own fields left to the contract (the operation's response schema; the answer's
 * objects are open). An agent pays for every byte of tools/list on every turn, and reads the
 * data itself in the text block.
 */
function shallow(schema: unknown): unknown {
  const top = schema as {
    properties?: Record<string, Record<string, unknown>>;
    definitions?: Record<string, unknown>;
  };
  const definitions = top.definitions;
  const list = top.properties?.items?.items as { properties?: Record<string, Record<string, unknown>> } | undefined;
  const resource = list ?? top;
  if (!resource.properties) return schema;
  for (const [name, field] of Object.entries(resource.properties)) {
    const type = field.type;
    const object = type === 'object' || (Array.isArray(type) && type.includes('object'));
    if (object && field.properties) resource.properties[name] = { type };
    const items = field.items as Record<string, unknown> | undefined;
    const item = typeof items?.$ref === 'string' ? definitions?.[items.$ref.split('/').pop()!] : items;
    if (type === 'array' && (item as Record<string, unknown> | undefined)?.properties)
      resource.properties[name] = { ...field, items: { type: 'object' } };
  }
  if (definitions) {
    // The definitions only the fields left out referred to go with them.
    const { definitions: _all, ...rest } = top;
    const used = Object.fromEntries(
      Object.entries(definitions).filter(([name]) => JSON.stringify(rest).includes(`"#/definitions/${name}"`)),
    );
    return Object.keys(used).length ? { ...rest, definitions: used } : rest;
  }
  return schema;
}

/**
 * A nullable value as one schema, `{"type": ["string", "null"], "format": "date"}`, rather than
 * zod's `anyOf` of the value and null: the same values (a format and string limits apply to
 * strings only), in half the bytes. Left as it is when the value's schema is not a plain typed
 * one (an enum would need null among its values, a reference cannot take a type).
 */
function orNull(schema: Record<string, unknown>): Record<string, unknown> {
  const { anyOf, ...rest } = schema;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return schema;
  const [value, none] = anyOf as Record<string, unknown>[];
  const plain = (s: Record<string, unknown> | undefined) =>
    s !== undefined && typeof s.type === 'string' && !('enum' in s) && !('anyOf' in s) && !('$ref' in s);
  if (!plain(value) || none?.type !== 'null' || Object.keys(none).length !== 1) return schema;
  const merged: Record<string, unknown> = { ...value, ...rest, type: [value!.type, 'null'] };
  return merged;
}

/** A map of names to schemas (properties, definitions): each value compacted, the names kept as they are. */
function compactEach(map: unknown, output: boolean): unknown {
  if (map === null || typeof map !== 'object') return map;
  return Object.fromEntries(Object.entries(map).map(([name, schema]) => [name, compact(schema, output)]));
}

/** A definition this short is written where it is used: a reference to it would cost more than it. */
const INLINE_BELOW = 100;

/**
 * The schema with its short definitions written in place (`{"type":"string","format":"uuid"}`
 * rather than a reference an agent has to follow), and only the longer ones kept under
 * `definitions`, by the names src/mcp/kit/inputs.ts gives them.
 */
function inlineSmall(schema: unknown): unknown {
  const root = schema as { definitions?: Record<string, unknown> };
  if (!root.definitions) return schema;
  const small = new Map(
    Object.entries(root.definitions)
      .filter(([, def]) => JSON.stringify(def).length < INLINE_BELOW)
      .map(([name, def]) => [`#/definitions/${name}`, def]),
  );
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const { $ref, allOf, ...rest } = node as Record<string, unknown>;
    if (typeof $ref === 'string' && small.has($ref))
      return { ...(walk(small.get($ref)) as object), ...(walk(rest) as object) };
    const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, walk(v)]));
    if (typeof $ref === 'string') out.$ref = $ref;
    if (Array.isArray(allOf)) {
      const parts = allOf.map(walk) as Record<string, unknown>[];
      // A lone part that is no longer a reference merges into its node (a description beside it).
      if (parts.length === 1 && !('$ref' in parts[0]!)) return { ...parts[0], ...out };
      out.allOf = parts;
    }
    return out;
  };
  const { definitions, ...body } = root;
  const kept = Object.fromEntries(Object.entries(definitions).filter(([name]) => !small.has(`#/definitions/${name}`)));
  const inlined = walk(body) as Record<string, unknown>;
  return Object.keys(kept).length ? { ...inlined, definitions: walk(kept) } : inlined;
}

/**
 * A tool as tools/list shows it, built once: the JSON Schemas are zod's conversion, with a shape
 * used more than once written once under `definitions` and referred to.
 */
const listed = (t: BoundTool): Tool => ({
  name: t.name,
  title: t.title,
  description: `${t.description} Needs the ${t.scope} scope.`,
  inputSchema: inlineSmall(
    compact(z.toJSONSchema(inputOf(t), { target: 'draft-7', io: 'input' }), false),
  ) as Tool['inputSchema'],
  outputSchema: inlineSmall(
    shallow(compact(z.toJSONSchema(t.output, { target: 'draft-7', io: 'output', reused: 'ref' }), true)),
  ) as Tool['outputSchema'],
  annotations: t.annotations,
});
const LISTED: readonly Tool[] = TOOLS.map(listed);
const LISTED_FOR = new Map<string, { tools: Tool[] }>();

/**
 * The answer to tools/list for a key: the tools its scopes let it call (a tool called without its
 * scope still answers, with an error naming the scope). One answer per set of scopes, kept.
 */
export function toolsFor(scopes: readonly string[]): { tools: Tool[] } {
  const key = [...scopes].sort().join(' ');
  let answer = LISTED_FOR.get(key);
  if (!answer) {
    answer = { tools: LISTED.filter((_, i) => scopes.includes(TOOLS[i]!.scope)) };
    LISTED_FOR.set(key, answer);
  }
  return answer;
}
