/**
 * The MCP server. Stateless: one McpServer and one transport per HTTP request (a shared
 * McpServer fails as soon as two requests overlap). What is costly is built once at module
 * load: the tool list with its zod schemas, and the JSON-schema validator.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { ProblemError } from '../http/problem.js';
import { findNul } from '../http/nul.js';
import { claim, complete, release, requestHash } from '../idempotency/idempotency.service.js';
import type { Logger } from '../http/log.js';
import type { ToolContext, ToolDef } from './tool.js';
import { projectsTools } from '../projects/projects.tools.js';
import { milestonesTools } from '../milestones/milestones.tools.js';
import { postsTools } from '../posts/posts.tools.js';

export const TOOLS: readonly ToolDef[] = [...projectsTools, ...milestonesTools, ...postsTools];
export const TOOL_NAMES: ReadonlySet<string> = new Set(TOOLS.map((t) => t.name));

const idempotencyKeyInput = z.string().regex(/^[\x21-\x7e]{1,255}$/)
  .describe('Optional. Send the same key when you retry this call: the first result is returned instead of creating it twice (kept 24 hours).');
/** Each tool's input schema, built once; creates also take an idempotencyKey. */
const INPUTS = new Map(TOOLS.map((t) => [t, t.creates ? t.input.extend({ idempotencyKey: idempotencyKeyInput.optional() }) : t.input] as const));
export const SERVER_INFO = { name: 'shipyard', title: 'Shipyard', version: '1.0.0' };
const INSTRUCTIONS =
  'Shipyard keeps a project roadmap (milestones) and build log. Call list_my_projects first to get project ids; ' +
  'then get_roadmap / list_build_logs to read and create_milestone, update_milestone, delete_milestone, create_build_log to write.';

const validator = new AjvJsonSchemaValidator();

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** Scope check, then the tool; every failure becomes an isError result with a clear, safe text. */
export async function runTool(tool: ToolDef, args: unknown, ctx: ToolContext, log: Logger, requestId: string): Promise<CallToolResult> {
  if (!(ctx.actor.scopes as readonly string[]).includes(tool.scope)) {
    return errorResult(
      `Forbidden: ${tool.name} needs the '${tool.scope}' scope; this API key has ${ctx.actor.scopes.join(', ') || 'no scopes'}. ` +
        'Create a key with that scope under Settings → Manage API keys.',
    );
  }
  const nul = findNul(args, '');
  if (nul !== undefined) return errorResult(`Invalid arguments for ${tool.name}: text must not contain NUL (\\u0000) characters (at ${nul || 'the arguments'}).`);
  const { idempotencyKey, ...toolArgs } = (args ?? {}) as { idempotencyKey?: string };
  let recordId: string | undefined;
  try {
    if (tool.creates && idempotencyKey !== undefined && ctx.actor.keyId) {
      const claimed = await claim(ctx.em, ctx.actor.keyId, `mcp:${tool.name}:${idempotencyKey}`, requestHash(tool.name, toolArgs));
      if (claimed.kind === 'replay') {
        const data = claimed.replay.body as Record<string, unknown>;
        return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
      }
      recordId = claimed.recordId;
    }
    const data = (await tool.run(toolArgs as never, ctx)) as Record<string, unknown>;
    if (recordId) await complete(ctx.em, recordId, 200, data, null);
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
  } catch (err) {
    if (recordId) await release(ctx.em, recordId).catch(() => undefined);
    if (err instanceof ProblemError) return errorResult(`${err.title}: ${err.detail}`);
    log.error('tool failed', { requestId, tool: tool.name, error: err });
    return errorResult(`Internal error while running ${tool.name} (request ${requestId}); nothing is known to have changed.`);
  }
}

export function buildMcpServer(ctx: ToolContext, log: Logger, requestId: string): McpServer {
  const server = new McpServer(SERVER_INFO, { jsonSchemaValidator: validator, capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: INPUTS.get(tool)!, outputSchema: tool.output, annotations: { title: tool.title, ...tool.annotations } },
      (args: unknown) => runTool(tool, args, ctx, log, requestId),
    );
  }
  return server;
}
