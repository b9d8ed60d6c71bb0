/**
 * The MCP server. Stateless: one SDK `Server` and one transport per HTTP request (a shared
 * server fails as soon as two requests overlap). It is the SDK's low-level `Server` with two
 * handlers of ours, tools/list and tools/call, instead of McpServer
 * (docs/decisions/0001-mcp-transport.md, docs/performance.md): McpServer rebuilt every tool's JSON Schema on each tools/list, registered seven
 * tools on each request, and checked each result with zod's async parser, which cost the
 * 50-milestone roadmap about twice the synchronous one. What is costly is built once at module
 * load: the tool list with its JSON Schemas (zod's own conversion, as McpServer writes them),
 * the input schemas, and the JSON-schema validator.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { ProblemError, type Reason, type ProblemSlug } from '../kernel/problem.js';
import { findNul } from '../http/nul.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { createRequestHash } from '../idempotency/idempotency.service.js';
import { API_BASE, listOperations, patternMessages, SERVED } from '../kernel/contract.js';
import { LINE_PATTERN, linePaths, notLinesAt, type LinePath } from '../kernel/text.js';
import { resourceNameOf } from '../security-log/security-log.service.js';
import { runWrite, type Written } from '../writes/writes.service.js';
import type { Logger } from '../kernel/logger.js';
import { bindTools, type BoundTool, type ToolContext } from './kit/tool.js';
import type { ObjectRules } from '../kernel/contract.js';
import { answer, clip } from './kit/answers.js';
import type { WrittenBy } from './kit/authorship.js';
import { ARGUMENT_HINTS } from './kit/inputs.js';
import { EXPIRY_META_KEY, expiryNotice } from './expiry.js';
import { projectsTools } from '../projects/projects.tools.js';
import { milestonesTools } from '../milestones/milestones.tools.js';
import { postsTools } from '../posts/posts.tools.js';

/** Each tool with the scope of the REST operation it mirrors, read from the contract. */
export const TOOLS: readonly BoundTool[] = bindTools([...projectsTools, ...milestonesTools, ...postsTools], SERVED);
const BY_NAME: ReadonlyMap<string, BoundTool> = new Map(TOOLS.map((t) => [t.name, t]));
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
function inputOf(tool: BoundTool): z.ZodObject {
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
const SERVER_INFO = { name: 'shipyard', title: 'Shipyard', version: '1.0.0' };
const INSTRUCTIONS =
  'Shipyard keeps a project roadmap (milestones) and build log. Call list_my_projects first to get project ids; ' +
  'then get_roadmap / list_build_logs to read and create_milestone, update_milestone, delete_milestone, create_build_log to write.';

/** Formats that say all a pattern would: zod writes its own long regular expression beside each. */
const FORMATS_WITHOUT_PATTERN = new Set(['uuid', 'date', 'date-time']);
/**
 * What an output schema leaves out: limits on what the server itself writes, which no client acts
 * on, and the fields' prose. A program reads output schemas (it has the contract, where every
 * field is described); a model pays for them on every turn, and reads the data in the text block.
 */
const OUTPUT_LEAVES_OUT = ['minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'description'];

/**
 * A JSON Schema as an agent's context pays for it: a `pattern` dropped where the `format` beside it
 * states the same, a lone reference (`allOf: [{ $ref }]`) written as the reference, and for an
 * output schema, no length, pattern or range limits and no descriptions (the types, required
 * fields, enums and formats stay, and the server checks its answers against the full schema:
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
  if (typeof schema.format === 'string' && FORMATS_WITHOUT_PATTERN.has(schema.format)) delete schema.pattern;
  // The one-line rule is a long pattern that still cannot say it all (src/kernel/text.ts): the
  // argument's description says "one line", and the server checks it.
  if (schema.pattern === LINE_PATTERN) delete schema.pattern;
  if (output) for (const key of OUTPUT_LEAVES_OUT) delete schema[key];
  delete schema.$schema; // draft-7 is what MCP clients assume
  const { allOf, ...rest } = schema;
  if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(rest).length === 0) return allOf[0];
  return schema;
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
    compact(z.toJSONSchema(t.output, { target: 'draft-7', io: 'output', reused: 'ref' }), true),
  ) as Tool['outputSchema'],
  annotations: t.annotations,
});
const LISTED: readonly Tool[] = TOOLS.map(listed);
const LISTED_FOR = new Map<string, { tools: Tool[] }>();

/**
 * The answer to tools/list for a key: the tools its scopes let it call (a tool called without its
 * scope still answers, with an error naming the scope). One answer per set of scopes, kept.
 */
function toolsFor(scopes: readonly string[]): { tools: Tool[] } {
  const key = [...scopes].sort().join(' ');
  let answer = LISTED_FOR.get(key);
  if (!answer) {
    answer = { tools: LISTED.filter((_, i) => scopes.includes(TOOLS[i]!.scope)) };
    LISTED_FOR.set(key, answer);
  }
  return answer;
}

/** One for every server: the SDK builds a new Ajv for each server that is not given one. */
const validator = new AjvJsonSchemaValidator();

/** A refusal's text, however much of the arguments it repeats, well under the answer cap. */
const errorResult = (text: string): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: text.length > 4_000 ? `${clip(text, 4_000)}…` : text }],
});
const issues = (error: z.ZodError): string =>
  error.issues.map((i) => (i.path.length ? `${i.message} at ${i.path.join('.')}` : i.message)).join('; ');
/** What to send instead, for each refused argument that has a hint (./kit/inputs.ts). */
const hints = (error: z.ZodError): string => {
  const fields = new Set(error.issues.map((i) => String(i.path[0] ?? '')));
  return [...fields].map((f) => (ARGUMENT_HINTS[f] ? ` ${ARGUMENT_HINTS[f]}` : '')).join('');
};

const YOUR_PROJECTS =
  'list_my_projects gives the ids of the projects you own, and with role "member" those you were added to.';
/** What to do after a refusal, by its reason (src/kernel/problem.ts): what is true for this caller. */
const NEXT_STEP: Record<Reason, string> = {
  'unknown-project': ` No project you can see has that id. ${YOUR_PROJECTS}`,
  'member-not-owner':
    " You are a member of this project: members post build logs (create_build_log); only the project's owner edits its roadmap.",
  'stranger-not-owner': ` You are neither the owner nor a member of this project, so you cannot change it. ${YOUR_PROJECTS}`,
  'not-a-contributor': ` You are neither the owner nor a member of this project. ${YOUR_PROJECTS}`,
};
const nextStep = (err: ProblemError): string => (err.reason ? NEXT_STEP[err.reason] : '');

/** How long to wait before retrying when the database cannot be reached: REST's Retry-After. */
const RETRY_AFTER_S = 5;
/** The same meaning REST gives a 503, for a program reading the result: the problem's type and when to retry. */
const UNAVAILABLE_META = {
  'shipyard.dev/problem': { type: '/problems/unavailable', status: 503, retryAfter: RETRY_AFTER_S },
};
/**
 * The database went away during the call (REST answers 503 with Retry-After): say so, when to try
 * again, and what a retry does for this tool.
 */
function unavailableText(tool: BoundTool): string {
  const retry = tool.annotations.readOnlyHint
    ? 'Retry the same call then.'
    : tool.creates
      ? 'Retry the same call then, with the same idempotencyKey: the create happens at most once, and if it was made before the outage the retry returns it instead of making a second one. Without an idempotencyKey, list first to check whether it was made.'
      : tool.operation.startsWith('delete')
        ? 'Retry the same call then: it is safe to repeat (if the delete was done before the outage, the retry answers that the milestone is not found).'
        : 'Retry the same call then: it sets the same values again, so repeating it is safe.';
  return `Service unavailable: the database cannot be reached right now, so ${tool.name} may not have run. Wait about ${RETRY_AFTER_S} seconds. ${retry}`;
}

/** What a tool that says nothing of authorship answers with: the caller's own words (what it just wrote). */
const YOURS: WrittenBy = () => ({ by: 'you' });

/** What runTool needs besides the tool's own context. */
export type RunOptions = {
  log: Logger;
  requestId: string;
  /** Settings → Manage API keys, named when the key is about to expire. */
  keysPage: string;
  /** Check each result against the tool's output schema (VALIDATE_RESPONSES; tests always do). */
  checkOutput: boolean;
};

/** A result that does not match the tool's own output schema: a defect of ours, logged, never sent. */
class OutputMismatch extends Error {
  override name = 'OutputMismatch';
}

/**
 * Scope check, arguments (NUL, then the tool's input schema), the tool, then its result against
 * its output schema. Every failure becomes an isError result with a clear, safe text.
 */
export async function runTool(
  tool: BoundTool,
  args: unknown,
  ctx: ToolContext,
  opts: RunOptions,
): Promise<CallToolResult> {
  const expiry = expiryNotice(ctx.actor.expiresAt, opts.keysPage);
  const warned = (result: CallToolResult): CallToolResult =>
    expiry ? { ...result, _meta: { ...result._meta, [EXPIRY_META_KEY]: expiry.meta } } : result;
  const failed = (text: string) => warned(errorResult(expiry ? `${text}\n${expiry.line}` : text));
  const refused = refusal(tool, args, ctx);
  if (typeof refused === 'string') return failed(refused);
  const { idempotencyKey, ...toolArgs } = refused.args;
  let writtenBy: WrittenBy = YOURS;
  const call: ToolContext = {
    ...ctx,
    attribute: (w) => {
      writtenBy = w;
    },
  };
  try {
    const data = await runOnce(tool, toolArgs, idempotencyKey, call, opts);
    const followUp = await tool.followUp?.(data as never, toolArgs as never, ctx);
    const note = [followUp, expiry?.line].filter(Boolean).join(' ') || undefined;
    return warned(
      await answer(data, {
        headline: (shown) => tool.headline(shown as never, toolArgs as never),
        note,
        texts: tool.texts ?? [],
        cursorAfter: tool.cursorAfter && ((kept) => tool.cursorAfter!(kept, data as never, toolArgs as never, ctx)),
        wholeAt: tool.wholeAt && ((item) => `GET ${API_BASE}${tool.wholeAt!(item)}`),
        writtenBy,
      }),
    );
  } catch (err) {
    if (err instanceof ProblemError) return failed(`${err.title}: ${err.detail}${nextStep(err)}`);
    if (isDatabaseUnavailable(err)) {
      opts.log.error('database unavailable', { requestId: opts.requestId, tool: tool.name, error: err });
      return { ...failed(unavailableText(tool)), _meta: { ...UNAVAILABLE_META } };
    }
    opts.log.error('tool failed', { requestId: opts.requestId, tool: tool.name, error: err });
    return failed(
      err instanceof OutputMismatch
        ? `Internal error while running ${tool.name} (request ${opts.requestId}): its result did not pass the server's own check, so it is not sent.`
        : `Internal error while running ${tool.name} (request ${opts.requestId}); nothing is known to have changed.`,
    );
  }
}

/** Each operation's path under the API's base, by operationId: where a tool's write is recorded as made. */
const PATHS: ReadonlyMap<string, string> = new Map(listOperations(SERVED).map((op) => [op.operationId, op.path]));

/**
 * What a tool's write names in its owner's security log, as its REST operation's would: the
 * create's Location, or the operation's path with the tool's arguments in it.
 */
function written(tool: BoundTool, args: Record<string, unknown>, data: Record<string, unknown>): Written {
  const path = tool.creates
    ? tool.creates.location(data as never)
    : (PATHS.get(tool.operation) ?? '').replace(/\{(\w+)\}/g, (whole, name: string) =>
        typeof args[name] === 'string' ? encodeURIComponent(args[name]) : whole,
      );
  return { resource: `${API_BASE}${path}`, resourceName: resourceNameOf(data) };
}

/** Why the call is refused before the tool runs (its scope, a NUL, its input schema), or its parsed arguments. */
function refusal(
  tool: BoundTool,
  args: unknown,
  ctx: ToolContext,
): string | { args: { idempotencyKey?: string } & Record<string, unknown> } {
  if (!(ctx.actor.scopes as readonly string[]).includes(tool.scope)) {
    return (
      `Forbidden: ${tool.name} needs the '${tool.scope}' scope; this API key has ${ctx.actor.scopes.join(', ') || 'no scopes'}. ` +
      'Create a key with that scope under Settings → Manage API keys.'
    );
  }
  const nul = findNul(args, '');
  if (nul !== undefined)
    return `Invalid arguments for ${tool.name}: text must not contain NUL (\\u0000) characters (at ${nul || 'the arguments'}).`;
  const parsed = inputOf(tool).safeParse(args ?? {});
  if (!parsed.success) return `Invalid arguments for ${tool.name}: ${issues(parsed.error)}.${hints(parsed.error)}`;
  return { args: parsed.data as { idempotencyKey?: string } & Record<string, unknown> };
}

/** The tool's result, checked against its output schema; a create with an idempotency key happens once. */
async function runOnce(
  tool: BoundTool,
  toolArgs: Record<string, unknown>,
  idempotencyKey: string | undefined,
  ctx: ToolContext,
  opts: RunOptions,
): Promise<Record<string, unknown>> {
  const creates = tool.creates;
  const keyed = creates && idempotencyKey !== undefined && ctx.actor.keyId;
  const asked = keyed ? creates.request(toolArgs as never) : undefined;
  const outcome = await runWrite<Record<string, unknown>>(
    {
      em: ctx.em,
      actor: ctx.actor,
      operation: tool.operation,
      origin: { channel: 'mcp', ...ctx.origin },
      // The create and its record commit together (src/idempotency/idempotency.service.ts), recorded as
      // the REST operation that makes the same thing: a retry through either is a replay.
      idempotency: keyed
        ? {
            request: {
              userId: ctx.actor.userId,
              apiKeyId: ctx.actor.keyId!,
              key: idempotencyKey!,
              hash: createRequestHash(tool.operation, asked!.params, asked!.body),
            },
            stored: (o) =>
              'result' in o
                ? { status: 201, body: o.result, location: `${API_BASE}${creates.location(o.result as never)}` }
                : undefined,
          }
        : undefined,
      written: (data) => (tool.annotations.readOnlyHint ? undefined : written(tool, toolArgs, data)),
      logFailed: (error) =>
        opts.log.error('a write could not be put in the security log', {
          requestId: opts.requestId,
          tool: tool.name,
          error,
        }),
      // After the log entry, as REST checks its answer on the way out: a write made is logged.
      check: (data) => {
        if (!opts.checkOutput) return;
        const checked = tool.output.safeParse(data);
        if (!checked.success)
          throw new OutputMismatch(
            `the result of ${tool.name} does not match its output schema: ${issues(checked.error)}`,
          );
      },
    },
    async (em) => (await tool.run(toolArgs as never, { ...ctx, em })) as Record<string, unknown>,
  );
  if (outcome.kind !== 'replay') return outcome.result;
  // A refusal the REST operation recorded for this key is this call's refusal too.
  const { status, body: stored } = outcome.replay;
  if (status >= 400) {
    // A stored answer is one this server made: its type is one of the catalogue's.
    const problem = stored as { status: number; type: string; title: string; detail: string };
    throw new ProblemError(
      problem.status,
      problem.type.split('/').at(-1) as ProblemSlug,
      problem.title,
      problem.detail,
    );
  }
  return stored as Record<string, unknown>;
}

/** A server for one HTTP request: initialize and ping are the SDK's, tools/list and tools/call ours. */
export function buildMcpServer(ctx: ToolContext, opts: RunOptions): Server {
  const server = new Server(SERVER_INFO, {
    jsonSchemaValidator: validator,
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => toolsFor(ctx.actor.scopes));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = BY_NAME.get(request.params.name);
    // The router answers an unknown tool before this (-32602 too); this is the same answer.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return runTool(tool, request.params.arguments, ctx, opts);
  });
  return server;
}
