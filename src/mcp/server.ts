/**
 * The MCP server. Stateless: one McpServer and one transport per HTTP request (a shared
 * McpServer fails as soon as two requests overlap). What is costly is built once at module
 * load: the tool list with its zod schemas, and the JSON-schema validator.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError } from '../http/problem.js';
import { findNul } from '../http/nul.js';
import type { Logger } from '../http/log.js';
import type { ToolContext, ToolDef } from './tool.js';
import { projectsTools } from '../projects/projects.tools.js';
import { milestonesTools } from '../milestones/milestones.tools.js';
import { postsTools } from '../posts/posts.tools.js';

export const TOOLS: readonly ToolDef[] = [...projectsTools, ...milestonesTools, ...postsTools];
export const TOOL_NAMES: ReadonlySet<string> = new Set(TOOLS.map((t) => t.name));
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
  try {
    const data = (await tool.run(args as never, ctx)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
  } catch (err) {
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
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { title: tool.title, ...tool.annotations } },
      (args: unknown) => runTool(tool, args, ctx, log, requestId),
    );
  }
  return server;
}
