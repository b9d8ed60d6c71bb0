/**
 * What an area declares for the MCP server: a tool's name, the REST operation it mirrors (whose
 * scope it needs: src/mcp/catalogue.ts binds it from the contract), its schemas (built once, from
 * the generated zod of the contract) and what it runs (the area's own service, which answers
 * presented; there is no second business layer).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import type { Actor } from '../../kernel/actor.js';
import {
  listOperations,
  mcpScopes,
  objectRules,
  type ObjectRules,
  type OpenApiDocument,
} from '../../kernel/contract.js';
import type { ScopeId } from '../../kernel/scopes.js';
import type { WrittenBy } from './authorship.js';

export type ToolContext = {
  em: EntityManager;
  actor: Actor;
  /** Where the call came from, for the security log's entry of a write. */
  origin?: { address?: string; client?: string };
  /**
   * A tool that answers with other people's words says whose each item is (./authorship.ts), from
   * what its run learnt anyway (the caller's role in the project). Left unsaid, an answer is the
   * caller's own words: what it just wrote.
   */
  attribute?: (writtenBy: WrittenBy) => void;
  /**
   * Lines the answer opens with, before its headline: what an agent should read first (a
   * roadmap's status), learnt by the run itself (with what it read anyway: the access it checked).
   */
  preface?: (lines: string) => void;
};

export type ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  name: string;
  /** The operationId of the REST operation that does the same: the tool needs its scope. */
  operation: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /**
   * A create: takes an optional idempotencyKey, so a client's retry replays instead of creating
   * twice. It names the request its operation would be sent (path parameters and body) and where
   * the result is (its Location): a key used on either side is the same key
   * (src/idempotency/idempotency.service.ts).
   */
  creates?: {
    request: (args: z.infer<I>) => { params: Record<string, string>; body: Record<string, unknown> };
    location: (result: z.infer<O>) => string;
  };
  run: (args: z.infer<I>, ctx: ToolContext) => Promise<z.infer<O>>;
  /**
   * The first line of the result's text, before the data itself (src/mcp/kit/answers.ts): what was
   * changed, or for a list what its items are ("3 milestones (done)"), given the items sent.
   */
  headline: (data: z.infer<O>, args: z.infer<I>) => string;
  /** A sentence after the headline, for an answer that alone could mislead (an empty list with a likely reason). */
  followUp?: (data: z.infer<O>, args: z.infer<I>, ctx: ToolContext) => Promise<string | undefined>;
  /** Fields of an item whose long text may be shortened to keep the answer under its cap. */
  texts?: readonly string[];
  /**
   * For a list: the cursor that continues after `kept`, the first items of this page, when its
   * answer is cut to fit its cap (`page` is the answer as it was, with its own nextCursor).
   */
  cursorAfter?: (
    kept: readonly Record<string, unknown>[],
    page: z.infer<O>,
    args: z.infer<I>,
    ctx: ToolContext,
  ) => Promise<string>;
  /**
   * What to do after a 404 that is not the project's (`unknown-project` has its own): for a tool
   * whose arguments name a milestone, where its ids are, and whether it may be gone already.
   */
  notFound?: string;
  /**
   * Where the whole of an item shortened to fit can be read: a REST operation that reads one
   * (the key may lack its scope: the answer then names it) and its path for the item.
   */
  wholeAt?: { operation: string; path: (item: Record<string, unknown>) => string };
};

/**
 * A tool with the scope of its operation, as the server serves it, and the rules its operation's
 * body states about the object as a whole (at least one field, fields that go together): the
 * tool takes the body's fields beside the path's, so the server checks these over them.
 */
export type BoundTool = ToolDef & { scope: ScopeId; bodyRules?: ObjectRules };

/**
 * The tools with the scopes of their operations in `doc`. Fails (the server does not start) when
 * a tool names an operation the contract lacks or one without a scope, or when the tools' scopes
 * together are not the MCP endpoint's (`x-mcp-scopes`): the tools and the contract cannot disagree.
 */
export function bindTools(tools: readonly ToolDef[], doc: OpenApiDocument): BoundTool[] {
  const access = new Map(listOperations(doc).map((op) => [op.operationId, op.access]));
  const problems: string[] = [];
  const bound = tools.flatMap((tool) => {
    if (tool.wholeAt && !access.has(tool.wholeAt.operation))
      problems.push(`${tool.name}: wholeAt names ${tool.wholeAt.operation}, which the contract lacks`);
    const rule = access.get(tool.operation);
    if (rule?.kind === 'scope') {
      const bodyRules = objectRules(doc, tool.operation);
      return [{ ...tool, scope: rule.scope, ...(bodyRules ? { bodyRules } : {}) }];
    }
    problems.push(
      rule
        ? `${tool.name}: its operation ${tool.operation} needs no scope a key can hold`
        : `${tool.name}: the contract has no operation ${tool.operation}`,
    );
    return [];
  });
  const endpoint = mcpScopes(doc);
  const used = new Set(bound.map((t) => t.scope));
  for (const scope of endpoint) if (!used.has(scope)) problems.push(`x-mcp-scopes names ${scope}, which no tool needs`);
  for (const scope of used)
    if (!endpoint.includes(scope)) problems.push(`a tool needs ${scope}, which x-mcp-scopes does not name`);
  if (problems.length) throw new Error(`The MCP tools and the contract disagree:\n  ${problems.join('\n  ')}`);
  return bound;
}

/** Keeps each tool's argument and result types tied to its own schemas. */
export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef =>
  def as unknown as ToolDef;
