/**
 * POST /api/v1/mcp — Streamable HTTP, stateless, JSON responses. In order:
 *   a browser page's Origin must be allowed (403: ./origins.ts)
 *   → outer gate: a valid key (401) holding projects.read, projects.write or content.write (403)
 *   → JSON body (parse errors as JSON-RPC -32700, answered after the unit they cost is spent)
 *   → the key's and the user's request budgets, shared with REST, one unit per JSON-RPC request
 *     (over budget: a JSON-RPC error for each request saying when to retry)
 *   → protocol versions: exactly 2025-11-25, 2025-06-18, 2025-03-26 (initialize with another is
 *     answered with 2025-11-25; another MCP-Protocol-Version header is a 400)
 *   → a new SDK Server (./server.ts) and transport (./transport.ts: the Streamable HTTP POST
 *     rules — 406, 415, batches, 202 — and JSON answers on Express's own response) for this
 *     request; a tools/call without a name or of an unknown tool is -32602 in its own place.
 * GET and DELETE get 405: a stateless server has no stream to open and no session to end.
 */
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type * as z from 'zod';
import { authenticateToken } from '../keys/keys.service.js';
import type { KeyCache } from '../keys/key-cache.js';
import type { KeyUse } from '../keys/key-use.js';
import { bearerToken } from '../http/kit/bearer.js';
import { ProblemError } from '../kernel/problem.js';
import { withResourceMetadata } from '../http/kit/challenge.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { API_BASE, MCP_SCOPES } from '../kernel/contract.js';
import { describeRequest, nameRoute } from '../telemetry/telemetry.js';
import { jsonBody } from '../http/kit/json-body.js';
import { chain } from '../http/kit/chain.js';
import type { Logger } from '../kernel/logger.js';
import type { FailedAuth, FreeOpening } from '../http/kit/budget-hooks.js';
import { buildMcpServer } from './server.js';
import { TOOL_NAMES } from './catalogue.js';
import { MCP_PROTOCOL_VERSIONS } from '../kernel/versions.js';
import { batchRefusal, JsonResponseTransport, requestId, rpcError, type Precheck } from './transport.js';
import { originGate } from './origins.js';
import { clip } from './kit/answers.js';

const SUPPORTED: readonly string[] = MCP_PROTOCOL_VERSIONS;

declare global {
  namespace Express {
    interface Request {
      /** Why the MCP body could not be read, answered once its unit is spent. */
      bodyError?: unknown;
      /** The MCP client calling (its name and version from initialize, else its User-Agent). */
      mcpClient?: string;
    }
  }
}

type JsonRpcMessage = {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown; protocolVersion?: unknown };
};

const messages = (body: unknown): JsonRpcMessage[] =>
  (Array.isArray(body) ? body : [body]).filter((m): m is JsonRpcMessage => typeof m === 'object' && m !== null);

/**
 * What a POST spends of the key's and the user's budgets: one unit per JSON-RPC request in it, so
 * a batch costs what its calls would cost one by one (and is refused whole when they do not all
 * fit); anything else (notifications, responses, what is not JSON-RPC) costs one unit a POST.
 * The one well-formed `notifications/initialized` that completes opening a connection, alone in
 * a small body, costs nothing, so connecting spends one unit (the initialize), not two; like
 * every POST it is refused once the budget is spent, and it is free only
 * FREE_OPENINGS_PER_WINDOW times per key and window (then it costs a unit).
 */
function budgetUnits(body: unknown, bytes: number, version: string | undefined): number {
  // A batch the transport refuses whole (empty, too long, under a version without batches) costs one unit.
  if (Array.isArray(body) && batchRefusal(body, version)) return 1;
  const all = messages(body);
  const requests = all.filter((m) => m.id !== undefined && typeof m.method === 'string').length;
  if (requests > 0) return requests;
  const [only] = all;
  const opening =
    !Array.isArray(body) &&
    only?.jsonrpc === '2.0' &&
    only.method === 'notifications/initialized' &&
    only.id === undefined &&
    (only.params === undefined ||
      (typeof only.params === 'object' &&
        only.params !== null &&
        !Array.isArray(only.params) &&
        Object.keys(only.params).length <= 1)) &&
    bytes <= 512;
  return opening ? 0 : 1;
}

const outerGate = (keys: KeyCache, failedAuth: FailedAuth, keysPage: string, resourceMetadata: string | undefined) =>
  async function outerGate(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const actor = await authenticateToken(req.em, bearerToken(req), keys, keysPage);
      if (!actor.scopes.some((s) => MCP_SCOPES.includes(s))) {
        return rpcError(
          res,
          403,
          -32001,
          `Forbidden: the MCP server needs a key with at least one of ${MCP_SCOPES.join(', ')}; this key has ${actor.scopes.join(', ')}.`,
          null,
          withResourceMetadata(
            { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${MCP_SCOPES.join(' ')}"` },
            resourceMetadata,
          ),
        );
      }
      req.actor = actor;
      // As on every REST answer (src/http/authenticate.ts): when the key stops working.
      if (actor.expiresAt) res.setHeader('Shipyard-Key-Expiration', actor.expiresAt.toISOString());
      next();
    } catch (err) {
      if (err instanceof ProblemError && err.status === 401) {
        const refusal = await failedAuth(req, err).catch(() => err);
        if (refusal.status === 429) return next(refusal);
        return rpcError(
          res,
          401,
          -32001,
          `Unauthorized: ${err.detail}`,
          null,
          // The scopes the tools use, so that a client signing in asks for those (the MCP
          // authorization spec's scope selection) rather than for every scope there is.
          withResourceMetadata(err.headers, resourceMetadata, MCP_SCOPES),
        );
      }
      if (err instanceof ProblemError && err.status === 400) {
        const refusal = await failedAuth(req, err).catch(() => err);
        if (refusal.status === 429) return next(refusal);
        return rpcError(res, 400, -32600, `Bad Request: ${err.detail}`, null, err.headers);
      }
      next(err);
    }
  };

/**
 * Notes the key's use, by the client that said its name at initialize: a stateless server hears
 * it once per connection, so this process remembers it for the later calls with the same key and
 * User-Agent, and a client it never heard initialize is named by its User-Agent.
 */
const noteUse =
  (uses: KeyUse): RequestHandler =>
  (req, _res, next) => {
    const actor = req.actor!;
    const init = messages(req.body).find((m) => isInitializeRequest(m)) as
      | { params: { clientInfo: { name: string; version: string } } }
      | undefined;
    const agent = req.get('user-agent');
    req.mcpClient = init
      ? uses.noteMcpClient(actor.keyId!, agent, init.params.clientInfo.name, init.params.clientInfo.version)
      : (uses.mcpClientOf(actor.keyId!, agent) ?? agent);
    uses.note({ keyId: actor.keyId!, userId: actor.userId, channel: 'mcp', address: req.ip, client: req.mcpClient });
    next();
  };

function versionGate(req: Request, res: Response, next: NextFunction): void {
  const all = messages(req.body);
  const init = all.find((m) => isInitializeRequest(m));
  if (init?.params && !SUPPORTED.includes(String(init.params.protocolVersion))) {
    // Spec: answer with a version the server supports, its latest.
    init.params.protocolVersion = MCP_PROTOCOL_VERSIONS[0];
  }
  const header = req.header('mcp-protocol-version');
  if (!init && header !== undefined && !SUPPORTED.includes(header)) {
    return rpcError(
      res,
      400,
      -32000,
      `Bad Request: Unsupported protocol version: ${clip(header, 50)} (supported versions: ${MCP_PROTOCOL_VERSIONS.join(', ')})`,
      requestId(req.body),
    );
  }
  next();
}

/** The SDK's own schema for each request this server answers: params that fail it are the client's mistake. */
const REQUESTS: Record<string, z.ZodType> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

/** Where a "__proto__" key is, as a dotted path, or undefined (bounded by JSON's own depth limit: json-body.ts). */
function protoKeyIn(value: unknown, at: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return `${at}.__proto__`;
  for (const [key, item] of Object.entries(value)) {
    const found = protoKeyIn(item, `${at}.${key}`);
    if (found) return found;
  }
  return undefined;
}

/**
 * What the transport answers itself, in the request's place, as JSON-RPC -32602 Invalid params:
 * a tools/call without a tool name or naming a tool this server does not have, and any request
 * whose params do not have the shape the protocol gives them (tools/call `arguments` that are not
 * an object, an initialize without `clientInfo`), or with a key named `__proto__` anywhere (REST
 * refuses it as an unknown field). The SDK would answer the shapes with -32603, an internal error,
 * and a dump of its own validation.
 */
const precheck: Precheck = (request) => {
  if (request.method === 'tools/call') {
    const name = (request.params as { name?: unknown } | undefined)?.name;
    const tools = [...TOOL_NAMES].join(', ');
    if (typeof name !== 'string' || name === '')
      return {
        code: -32602,
        message: `Invalid params: tools/call needs params.name, the tool to call (one of ${tools})`,
      };
    if (!TOOL_NAMES.has(name))
      return { code: -32602, message: `Unknown tool: ${clip(name, 100)} (the tools are ${tools})` };
  }
  // Parsing would turn an own "__proto__" key into the object's prototype, and no check after it could see it.
  const proto = protoKeyIn(request.params, 'params');
  if (proto) return { code: -32602, message: `Invalid params: ${proto}: a key may not be named __proto__` };
  const parsed = REQUESTS[request.method]?.safeParse(request);
  if (!parsed || parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join('.') || 'params';
  return { code: -32602, message: `Invalid params: ${field}: ${issue.message}` };
};

/**
 * The size of the body as it will be read: its Content-Length, or unknown (infinite) when it is
 * compressed (it is read inflated, up to 1 MiB) or sent without a length.
 */
function bodyBytes(req: Request): number {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return Number.POSITIVE_INFINITY;
  return Number(req.headers['content-length'] ?? Number.POSITIVE_INFINITY);
}

/** The largest body read for a key whose budget is spent (to name its requests in the refusal). */
const READ_WHEN_SPENT = 64 * 1024;

/**
 * Over budget: each request in the body gets a JSON-RPC error saying when to retry, in an HTTP 200
 * answer, so that an MCP client hands the agent the reason instead of failing on the HTTP status.
 * A body with no request in it (notifications, unreadable JSON) gets the HTTP 429.
 */
function rateLimited(res: Response, body: unknown, err: ProblemError): void {
  const ids = messages(body)
    .filter((m) => typeof m.method === 'string')
    .map((m) => requestId(m))
    .filter((id) => id !== null);
  if (ids.length === 0) return rpcError(res, 429, -32000, err.detail, null, err.headers);
  const retryAfter = Number(err.headers['Retry-After'] ?? 60);
  const errors = ids.map((id) => ({
    jsonrpc: '2.0',
    id,
    error: { code: -32000, message: `Rate limit reached: ${err.detail}`, data: { status: 429, retryAfter } },
  }));
  res.status(200).json(Array.isArray(body) ? errors : errors[0]);
}

/** `checkOutput`: check each tool result against its output schema (VALIDATE_RESPONSES). */
export function mcpRouter({
  log,
  budget,
  freeOpening,
  failedAuth,
  keys,
  uses,
  keysPage,
  checkOutput,
  origins,
  resourceMetadata,
  noteWrites,
}: {
  log: Logger;
  budget: RequestHandler;
  /** Whether a connection-opening notification is still free for its key (src/http/rate-limit.ts). */
  freeOpening: FreeOpening;
  failedAuth: FailedAuth;
  keys: KeyCache;
  /** Where each key's use is noted, with the MCP client that made it. */
  uses: KeyUse;
  /** Settings → Manage API keys, named by a 401 for a key that stopped working. */
  keysPage: string;
  checkOutput: boolean;
  /** The browser origins allowed to call it (./origins.ts). */
  origins: ReadonlySet<string>;
  /** Its protected resource metadata (RFC 9728), named in each Bearer challenge when OAuth sign-in is on. */
  resourceMetadata?: string;
  /** With a read replica: a call's user reads from the primary for a moment after (src/http/replica-reads.ts). */
  noteWrites?: RequestHandler;
}): Router {
  const router = Router();
  router.use(named, originGate(origins));
  const { room, readBody, spend } = bodyAndBudget(budget, freeOpening);
  router.post(
    '/',
    outerGate(keys, failedAuth, keysPage, resourceMetadata),
    ...(noteWrites ? [noteWrites] : []),
    room,
    readBody,
    spend,
    versionGate,
    described,
    noteUse(uses),
    answerMcp(log, checkOutput, keysPage),
  );
  router.all('/', (_req, res) =>
    rpcError(res, 405, -32000, 'Method not allowed: this MCP endpoint is stateless and takes POST only.', null, {
      Allow: 'POST',
    }),
  );
  router.use(mcpErrors(log));
  return router;
}

/** The request's span and metrics are named by the endpoint's route. */
const named: RequestHandler = (_req, _res, next) => {
  nameRoute(`${API_BASE}/mcp`);
  next();
};

/** The request's span says what it asked: its JSON-RPC method (or `batch`) and protocol version. */
const described: RequestHandler = (req, _res, next) => {
  const all = messages(req.body);
  const method = all.length === 1 && typeof all[0]!.method === 'string' ? all[0]!.method : 'batch';
  describeRequest({
    'mcp.method.name': method,
    ...(req.header('mcp-protocol-version') ? { 'mcp.protocol.version': req.header('mcp-protocol-version') } : {}),
  });
  next();
};

/**
 * The body is read once the key is known to be good (an unauthenticated body is never read), and
 * what it costs is spent before its faults are answered: a malformed one costs a unit.
 */
function bodyAndBudget(
  budget: RequestHandler,
  freeOpening: FreeOpening,
): Record<'room' | 'readBody' | 'spend', RequestHandler> {
  const parse = chain(...jsonBody());
  const readBody: RequestHandler = (req, res, next) =>
    parse(req, res, (err?: unknown) => {
      if (err) req.bodyError = err;
      next();
    });
  // A key with nothing left is refused before a large body is read: it cannot make the server
  // parse for free. A small one (every ordinary call) is read, so that its refusal can answer each
  // request by its id (rateLimited).
  const room: RequestHandler = (req, res, next) => {
    if (bodyBytes(req) <= READ_WHEN_SPENT) return next();
    req.budgetUnits = 0;
    return budget(req, res, next);
  };
  const spend: RequestHandler = async (req, res, next) => {
    req.budgetUnits = req.bodyError ? 1 : budgetUnits(req.body, bodyBytes(req), req.header('mcp-protocol-version'));
    // A free opening is free only so often: past the key's allowance it costs a unit.
    if (req.budgetUnits === 0 && !(await freeOpening(req).catch(() => false))) req.budgetUnits = 1;
    return budget(req, res, (err?: unknown) => {
      if (err instanceof ProblemError && err.status === 429 && !req.bodyError) return rateLimited(res, req.body, err);
      next(err ?? req.bodyError);
    });
  };
  return { room, readBody, spend };
}

/** One MCP server and transport per request (stateless), on the request's own EntityManager and actor. */
function answerMcp(log: Logger, checkOutput: boolean, keysPage: string) {
  return async (req: Request, res: Response) => {
    const server = buildMcpServer(
      { em: req.em, actor: req.actor!, origin: { address: req.ip, client: req.mcpClient } },
      { log, requestId: req.requestId, checkOutput, keysPage, protocolVersion: req.header('mcp-protocol-version') },
    );
    const transport = new JsonResponseTransport();
    // Once the transport has answered, every request it passed on has been answered: nothing runs
    // that closing could abort, and closing would only make the SDK's "Connection closed" error (a
    // stack trace) on every request. A client gone before its answer still closes what it ran.
    let answered = false;
    res.on('close', () => {
      if (answered) return;
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handlePost(req, res, precheck);
      answered = true;
    } catch (err) {
      log.error('mcp request failed', { requestId: req.requestId, error: err });
      if (!res.headersSent) rpcError(res, 500, -32603, `Internal error (request ${req.requestId})`);
    }
  };
}

/** Every refusal as a JSON-RPC error (with the request's id when its body was read), never an HTML page. */
function mcpErrors(log: Logger) {
  return (err: Error & { type?: string }, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    if (err instanceof ProblemError && err.slug === 'malformed-json')
      return rpcError(res, 400, -32700, `Parse error: ${err.detail}`);
    if (err instanceof ProblemError)
      return rpcError(res, err.status, -32000, err.detail, req.bodyError ? null : requestId(req.body), err.headers);
    if (isDatabaseUnavailable(err))
      return rpcError(res, 503, -32000, 'The database cannot be reached right now; retry in a few seconds.', null, {
        'Retry-After': '5',
      });
    if (err.type === 'entity.too.large') return rpcError(res, 413, -32600, 'Request body too large (limit 1 MiB)');
    // The body reader's own refusals (an unsupported or corrupt Content-Encoding, a body cut short): the client's.
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return rpcError(res, status, -32000, `The request body could not be read: ${clip(err.message, 200)}`);
    log.error('mcp error', { requestId: req.requestId, error: err });
    rpcError(res, 500, -32603, `Internal error (request ${req.requestId})`);
  };
}
