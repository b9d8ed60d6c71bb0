/**
 * The MCP server. Stateless: one SDK `Server` and one transport per HTTP request (a shared
 * server fails as soon as two requests overlap). It is the SDK's low-level `Server` with two
 * handlers of ours, tools/list and tools/call, instead of McpServer
 * (docs/decisions/0001-mcp-transport.md, docs/performance.md): McpServer rebuilt every tool's JSON Schema on each tools/list, registered seven
 * tools on each request, and checked each result with zod's async parser, which cost the
 * 50-milestone roadmap about twice the synchronous one. What is costly is built once at module
 * load: the tool list with its JSON Schemas (zod's own conversion, as McpServer writes them) and
 * the input schemas in ./catalogue.ts, the JSON-schema validator here. A call runs in
 * ./run-tool.ts.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext } from './kit/tool.js';
import { BY_NAME, toolsFor } from './catalogue.js';
import { runTool, type RunOptions } from './run-tool.js';

const SERVER_INFO = { name: 'shipyard', title: 'Shipyard', version: '1.0.0' };
const INSTRUCTIONS =
  'Shipyard keeps a project roadmap (milestones) and build log. Call list_my_projects first to get project ids; ' +
  'then get_roadmap / list_build_logs to read and create_milestone, update_milestone, delete_milestone, create_build_log to write.';

/** One for every server: the SDK builds a new Ajv for each server that is not given one. */
const validator = new AjvJsonSchemaValidator();

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
