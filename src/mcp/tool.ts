/**
 * What an area declares for the MCP server: a tool's name, the one scope it needs, its
 * schemas (built once, from the generated zod of the contract) and what it runs (the area's
 * own service and presenter; there is no second business layer).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import type { Actor } from '../kernel/actor.js';
import type { ScopeId } from '../kernel/scopes.js';

export type ToolContext = { em: EntityManager; actor: Actor };

export type ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  name: string;
  scope: ScopeId;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /**
   * A create: takes an optional idempotencyKey, so a client's retry replays instead of creating
   * twice. It names the REST operation that makes the same thing, the request it would send there
   * (path parameters and body) and where the result is (its Location): a key used on either side
   * is the same key (src/idempotency/idempotency.service.ts).
   */
  creates?: {
    operationId: string;
    request: (args: z.infer<I>) => { params: Record<string, string>; body: Record<string, unknown> };
    location: (result: z.infer<O>) => string;
  };
  run: (args: z.infer<I>, ctx: ToolContext) => Promise<z.infer<O>>;
  /**
   * The first line of the result's text, before the data itself (src/mcp/answers.ts): what was
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
  /** Where the whole of an item shortened to fit can be read (a REST path). */
  wholeAt?: (item: Record<string, unknown>) => string;
};

/** Keeps each tool's argument and result types tied to its own schemas. */
export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef =>
  def as unknown as ToolDef;
