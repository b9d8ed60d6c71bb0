import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError, type ProblemCode, type ProblemSlug } from '../kernel/problem.js';
import { findNul } from '../http/kit/nul.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { createRequestHash } from '../idempotency/idempotency.service.js';
import { API_BASE, listOperations, SERVED } from '../kernel/contract.js';
import { resourceNameOf } from '../security-log/security-log.service.js';
import { runWrite, type Written } from '../writes/writes.service.js';
import type { Logger } from '../kernel/logger.js';
import { inSpan, measure, SpanStatusCode } from '../telemetry/telemetry.js';
import type { BoundTool, ToolContext } from './kit/tool.js';
import { answer, clip } from './kit/answers.js';
import type { WrittenBy } from './kit/authorship.js';
import { EXPIRY_META_KEY, expiryNotice } from './expiry.js';
import { inputOf, outputMismatch } from './catalogue.js';
import {
  asToolWords,
  hints,
  issues,
  nextStep,
  outOfReach,
  REPLAYED,
  REPLAYED_REFUSAL,
  RETRY_AFTER_S,
  unavailableText,
} from './refusal-texts.js';

/** A refusal's text, however much of the arguments it repeats, well under the answer cap. */
const errorResult = (text: string): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: text.length > 4_000 ? `${clip(text, 4_000)}…` : text }],
});
/** The `_meta` key of a refusal's problem (MCP: a prefix of our own, then a name). */
const PROBLEM_META_KEY = 'shipyard.dev/problem';
/** A refusal as REST would answer it, for a program reading the result: its type, code and status. */
const problemMeta = (err: ProblemError, more: { retryAfter?: number } = {}) => ({
  [PROBLEM_META_KEY]: { type: err.toProblem().type, code: err.code, status: err.status, ...more },
});

/** The same meaning REST gives a 503, for a program reading the result: the problem's type and when to retry. */
const UNAVAILABLE_META = problemMeta(new ProblemError(503, 'unavailable', 'Service unavailable', ''), {
  retryAfter: RETRY_AFTER_S,
});
/** A fault of the server's, as REST's 500 says it. */
const INTERNAL_META = problemMeta(new ProblemError(500, 'internal', 'Internal error', ''));

/** The `_meta` key that marks an answer replayed from its idempotency record, for a program. */
const REPLAYED_META_KEY = 'shipyard.dev/idempotent-replayed';
/** Refusals replayed from the idempotency record (runOnce), told apart by problem(). */
const REPLAYED_REFUSALS = new WeakSet<ProblemError>();
/** The advice that follows an argument's refusal (./kit/inputs.ts): the server's words in its detail. */
const ADVICE = new WeakMap<ProblemError, string>();
const advised = (err: ProblemError, advice: string) => {
  ADVICE.set(err, advice);
  return err;
};

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
  /** The MCP-Protocol-Version the client sent, for its span and metrics. */
  protocolVersion?: string;
};

/** A result that does not match the tool's own output schema: a defect of ours, logged, never sent. */
class OutputMismatch extends Error {
  override name = 'OutputMismatch';
}

/**
 * One tool call in a span of its own, timed: named by its tool, and by its problem's code when it
 * failed (`error.type`), so a dashboard shows which tool fails most, and why.
 */
export async function runTool(
  tool: BoundTool,
  args: unknown,
  ctx: ToolContext,
  opts: RunOptions,
): Promise<CallToolResult> {
  const started = performance.now();
  const attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': tool.name,
    ...(opts.protocolVersion ? { 'mcp.protocol.version': opts.protocolVersion } : {}),
  };
  return inSpan(`tools/call ${tool.name}`, { attributes }, async (span) => {
    const result = await callTool(tool, args, ctx, opts);
    const problem = result._meta?.[PROBLEM_META_KEY] as { code?: string } | undefined;
    const failure = result.isError ? (problem?.code ?? 'tool_error') : undefined;
    if (failure) {
      span.setAttribute('error.type', failure);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
    }
    measure.mcpOperation.record((performance.now() - started) / 1000, {
      ...attributes,
      ...(failure ? { 'error.type': failure } : {}),
    });
    return result;
  });
}

/**
 * Scope check, arguments (NUL, then the tool's input schema), the tool, then its result against
 * its output schema. Every failure becomes an isError result with a clear, safe text.
 */
async function callTool(tool: BoundTool, args: unknown, ctx: ToolContext, opts: RunOptions): Promise<CallToolResult> {
  const expiry = expiryNotice(ctx.actor.expiresAt, opts.keysPage);
  const warned = (result: CallToolResult): CallToolResult =>
    expiry ? { ...result, _meta: { ...result._meta, [EXPIRY_META_KEY]: expiry.meta } } : result;
  const failed = (text: string) => warned(errorResult(expiry ? `${text}\n${expiry.line}` : text));
  const problem = (err: ProblemError): CallToolResult => {
    const next = nextStep(tool, err);
    const text = asToolWords(err, `${err.title}: ${err.detail}${next}`);
    // A scope refusal names the tool it refused and the scope already; an argument's refusal
    // repeats the caller's words, of which only the advice after them is the server's.
    const own = err.code === 'validation' ? (ADVICE.get(err) ?? '') : `${err.detail}${next}`;
    const reach = err.code === 'insufficient-scope' ? '' : outOfReach(own, ctx.actor.scopes);
    const again = REPLAYED_REFUSALS.has(err) ? ` ${REPLAYED_REFUSAL}` : '';
    const result = failed(`${text}${reach}${again}`);
    return {
      ...result,
      _meta: { ...result._meta, ...problemMeta(err), ...(again ? { [REPLAYED_META_KEY]: true } : {}) },
    };
  };
  const refused = refusal(tool, args, ctx);
  if (refused instanceof ProblemError) return problem(refused);
  const { idempotencyKey, ...toolArgs } = refused.args;
  let writtenBy: WrittenBy = YOURS;
  let preface: string | undefined;
  const call: ToolContext = {
    ...ctx,
    attribute: (w) => {
      writtenBy = w;
    },
    preface: (lines) => {
      preface = lines;
    },
  };
  try {
    const { data, replayed } = await runOnce(tool, toolArgs, idempotencyKey, call, opts);
    const followUp = await tool.followUp?.(data as never, toolArgs as never, ctx);
    const note = [replayed ? REPLAYED : undefined, followUp, expiry?.line].filter(Boolean).join(' ') || undefined;
    const answered = warned(
      await answer(data, {
        headline: (shown) => tool.headline(shown as never, toolArgs as never),
        preface,
        note,
        texts: tool.texts ?? [],
        cursorAfter: tool.cursorAfter && ((kept) => tool.cursorAfter!(kept, data as never, toolArgs as never, ctx)),
        wholeAt: tool.wholeAt && wholeAt(tool.wholeAt, ctx.actor.scopes),
        writtenBy,
      }),
    );
    return replayed ? { ...answered, _meta: { ...answered._meta, [REPLAYED_META_KEY]: true } } : answered;
  } catch (err) {
    if (err instanceof ProblemError) return problem(err);
    if (isDatabaseUnavailable(err)) {
      opts.log.error('database unavailable', { requestId: opts.requestId, tool: tool.name, error: err });
      return { ...failed(unavailableText(tool)), _meta: { ...UNAVAILABLE_META } };
    }
    opts.log.error('tool failed', { requestId: opts.requestId, tool: tool.name, error: err });
    const result = failed(
      err instanceof OutputMismatch
        ? `Internal error while running ${tool.name} (request ${opts.requestId}): its result did not pass the server's own check, so it is not sent.`
        : `Internal error while running ${tool.name} (request ${opts.requestId}); nothing is known to have changed.`,
    );
    return { ...result, _meta: { ...result._meta, ...INTERNAL_META } };
  }
}

const OPERATIONS = new Map(listOperations(SERVED).map((op) => [op.operationId, op]));
/** Each operation's path under the API's base, by operationId: where a tool's write is recorded as made. */
const PATHS: ReadonlyMap<string, string> = new Map([...OPERATIONS].map(([id, op]) => [id, op.path]));

/** Where a shortened item is whole, as the answer names it: with the scope it needs when this key lacks it. */
function wholeAt(at: NonNullable<BoundTool['wholeAt']>, scopes: readonly string[]) {
  const access = OPERATIONS.get(at.operation)?.access;
  const lacking = access?.kind === 'scope' && !scopes.includes(access.scope) ? access.scope : undefined;
  return (item: Record<string, unknown>) =>
    `GET ${API_BASE}${at.path(item)}${lacking ? ` (with a key that has the '${lacking}' scope; this one has not)` : ''}`;
}

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
): ProblemError | { args: { idempotencyKey?: string } & Record<string, unknown> } {
  if (!(ctx.actor.scopes as readonly string[]).includes(tool.scope)) {
    return new ProblemError(
      403,
      'insufficient-scope',
      'Forbidden',
      `${tool.name} needs the '${tool.scope}' scope; this API key has ${ctx.actor.scopes.join(', ') || 'no scopes'}. ` +
        'Create a key with that scope under Settings → Manage API keys.',
    );
  }
  const invalid = (detail: string) => new ProblemError(400, 'validation', `Invalid arguments for ${tool.name}`, detail);
  const nul = findNul(args, '');
  if (nul !== undefined)
    return invalid(`text must not contain NUL (\\u0000) characters (at ${nul || 'the arguments'}).`);
  const input = inputOf(tool);
  const parsed = input.safeParse(args ?? {});
  if (!parsed.success) {
    const advice = hints(parsed.error);
    return advised(invalid(`${issues(parsed.error, args, input)}.${advice}`), advice);
  }
  return { args: parsed.data as { idempotencyKey?: string } & Record<string, unknown> };
}

/**
 * The tool's result, checked against its output schema; a create with an idempotency key happens
 * once, and a retry is answered with the first call's result (`replayed`).
 */
async function runOnce(
  tool: BoundTool,
  toolArgs: Record<string, unknown>,
  idempotencyKey: string | undefined,
  ctx: ToolContext,
  opts: RunOptions,
): Promise<{ data: Record<string, unknown>; replayed: boolean }> {
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
        const wrong = outputMismatch(tool, data);
        if (wrong) throw new OutputMismatch(`the result of ${tool.name} does not match its output schema: ${wrong}`);
      },
    },
    async (em) => (await tool.run(toolArgs as never, { ...ctx, em })) as Record<string, unknown>,
  );
  if (outcome.kind !== 'replay') return { data: outcome.result, replayed: false };
  // A refusal the REST operation recorded for this key is this call's refusal too.
  const { status, body: stored } = outcome.replay;
  if (status >= 400) {
    // A stored answer is one this server made: its type and code are the catalogue's.
    const problem = stored as { status: number; type: string; code: string; title: string; detail: string };
    const slug = problem.type.split('/').at(-1) as ProblemSlug;
    const refusal = new ProblemError(problem.status, slug, problem.title, problem.detail);
    REPLAYED_REFUSALS.add(refusal);
    throw problem.code === slug ? refusal : refusal.because(problem.code as ProblemCode);
  }
  return { data: stored as Record<string, unknown>, replayed: true };
}
