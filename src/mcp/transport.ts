/**
 * The MCP endpoint's transport: Streamable HTTP, stateless, JSON responses only — the subset
 * this server speaks — on Express's own request and response, behind the SDK's own `Transport`
 * interface, under the SDK's `Server` (./server.ts). Why it is not the SDK's class:
 * docs/decisions/0001-mcp-transport.md.
 *
 * The POST rules (test/mcp.test.ts checks each): 406 unless Accept lists application/json and
 * text/event-stream; 415 for a body that is not application/json; 400 -32600 for JSON that is not
 * a JSON-RPC message. Batches are 2025-03-26's only (400 -32600 under a later MCP-Protocol-Version),
 * never empty, at most 100 messages, with one initialize at most and an id of their own for each
 * request; inside a batch, an element that is not JSON-RPC, or a request the router's precheck
 * answers, gets its error in its place beside the other answers. 202 with no body when nothing
 * in it is a request, else one JSON answer (an array for a batch); a cancellation is ignored
 * (isCancellation). An HTTP-level refusal of one
 * request carries its id. A stateless server has no stream to send anything else on, so
 * messages the server would send outside a response (progress, logging) are dropped.
 */
import type { Request, Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import {
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** A JSON-RPC error as the whole HTTP answer: every refusal of the MCP endpoint, the router's and this transport's. */
export function rpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  headers: Record<string, string> = {},
): void {
  res.status(status).set(headers).json({ jsonrpc: '2.0', id, error: { code, message } });
}

/** The longest string id a request may have (the contract's JsonRpcMessage.id): an id is echoed back. */
const MAX_ID_LENGTH = 200;

const boundedId = (id: unknown): id is RequestId =>
  (typeof id === 'string' && id.length <= MAX_ID_LENGTH) || (typeof id === 'number' && Number.isSafeInteger(id));

/** The id of the one request a body holds, when it can be read; null otherwise (a batch, a notification, an id out of bounds). */
export function requestId(body: unknown): RequestId | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { id } = body as { id?: unknown };
  return boundedId(id) ? id : null;
}

/** An id longer than MAX_ID_LENGTH or an integer past 2^53: the message is refused, its id not echoed. */
function idRefusal(raw: unknown[]): Refusal | undefined {
  const outOfBounds = raw.some((m) => {
    const id = typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : undefined;
    return (typeof id === 'string' || typeof id === 'number') && !boundedId(id);
  });
  return outOfBounds
    ? {
        status: 400,
        code: -32600,
        message: `Invalid Request: an id is a string of at most ${MAX_ID_LENGTH} characters or an integer within ±(2^53 - 1)`,
      }
    : undefined;
}

/** The protocol version batches belong to: 2025-06-18 removed them. No header means 2025-03-26 (the specification's rule). */
const BATCH_VERSION = '2025-03-26';

/**
 * An answer the transport gives a request itself, before the server sees it (the router's checks,
 * e.g. a tools/call without a tool name); undefined lets the server answer it.
 */
export type Precheck = (request: JSONRPCRequest) => JSONRPCErrorResponse['error'] | undefined;

export class JsonResponseTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly waiting = new Map<RequestId, (answer: JSONRPCMessage) => void>();
  private closed = false;
  /** Settles when the transport closes, so a POST whose client went away stops waiting. */
  private readonly ended: Promise<void>;
  private readonly onEnd: () => void;

  constructor() {
    let end = () => {};
    this.ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.onEnd = end;
  }

  async start(): Promise<void> {}

  /**
   * The server's answer to one of this POST's requests; anything else has nowhere to go. The
   * message is the SDK server's own, so its shape tells a response (no zod parse of the whole
   * result on every call, as the SDK's `isJSONRPCResultResponse` would do).
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!('result' in message || 'error' in message) || message.id === undefined) return;
    this.waiting.get(message.id)?.(message);
    this.waiting.delete(message.id);
  }

  /** The client went away: the server aborts what it was running, and nothing is answered. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.waiting.clear();
    this.onEnd();
    this.onclose?.();
  }

  /** Answers one POST: its body already parsed (src/http/kit/json-body.ts). */
  async handlePost(req: Request, res: Response, precheck: Precheck = () => undefined): Promise<void> {
    // The headers and the batch's size and version are checked before any element is parsed.
    const early = headerRefusal(req) ?? batchSizeRefusal(req);
    if (early) return rpcError(res, early.status, early.code, early.message, early.id ?? null);
    const batch = Array.isArray(req.body);
    const raw: unknown[] = batch ? req.body : [req.body];
    const badId = idRefusal(raw);
    if (badId) return rpcError(res, badId.status, badId.code, badId.message, null);
    // Each element is a JSON-RPC message or answered as an Invalid Request in its place.
    const parsed = raw.map((m) => JSONRPCMessageSchema.safeParse(m));
    const refused = bodyRefusal(req, raw, parsed);
    if (refused) return rpcError(res, refused.status, refused.code, refused.message, refused.id ?? null);
    const toServer: JSONRPCMessage[] = [];
    const answers = raw.map((m, i): Promise<JSONRPCMessage> | undefined => {
      const message = parsed[i]!;
      if (!message.success) return Promise.resolve(invalid(requestId(m)));
      const request = message.data;
      if (isCancellation(request)) return undefined;
      if (!isJSONRPCRequest(request)) return void toServer.push(request);
      const early = precheck(request);
      if (early) return Promise.resolve({ jsonrpc: '2.0', id: request.id, error: early });
      toServer.push(request);
      return new Promise<JSONRPCMessage>((resolve) => this.waiting.set(request.id, resolve));
    });
    for (const m of toServer) this.onmessage?.(m);
    const pending = answers.filter((a): a is Promise<JSONRPCMessage> => a !== undefined);
    if (pending.length === 0) return void res.status(202).end();
    const all = await Promise.race([Promise.all(pending), this.ended]);
    if (!all || this.closed || res.writableEnded) return;
    res.status(200).json(batch ? all : all[0]);
  }
}

/**
 * A cancellation (`notifications/cancelled`) is not passed on. Stateless, the only requests it
 * could name are its own POST's, whose answers are that POST's response: the SDK would abort such
 * a request without answering it, and the POST would wait for an answer that never comes. The
 * specification lets a receiver ignore a cancellation of a request that cannot be cancelled; the
 * request is answered, and its sender ignores the answer.
 */
const isCancellation = (message: JSONRPCMessage): boolean =>
  'method' in message && !('id' in message) && message.method === 'notifications/cancelled';

type Refusal = { status: number; code: number; message: string; id?: RequestId | null };

/** What the Streamable HTTP transport requires of the headers: both answer types accepted, a JSON body. */
function headerRefusal(req: Request): Refusal | undefined {
  const id = requestId(req.body);
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    const message = 'Not Acceptable: Client must accept both application/json and text/event-stream';
    return { status: 406, code: -32000, message, id };
  }
  // A body that is not declared JSON is not read as JSON, whatever it holds: its id is unknown.
  if (!isJsonContentType(req.headers['content-type']))
    return {
      status: 415,
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
      id: null,
    };
  return undefined;
}

/** A batch where none is allowed, empty, or too long (batchRefusal): refused before its elements are parsed. */
function batchSizeRefusal(req: Request): Refusal | undefined {
  const refusal = Array.isArray(req.body) ? batchRefusal(req.body, req.header('mcp-protocol-version')) : undefined;
  return refusal ? { status: 400, code: -32600, message: `Invalid Request: ${refusal}` } : undefined;
}

/** Why the parsed body is refused whole: not JSON-RPC, initialize in a batch, ids repeated. */
function bodyRefusal(
  req: Request,
  raw: unknown[],
  parsed: ReturnType<typeof JSONRPCMessageSchema.safeParse>[],
): Refusal | undefined {
  const batch = Array.isArray(req.body);
  if (!batch && !parsed[0]!.success) {
    const message = 'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message';
    return { status: 400, code: -32600, message, id: requestId(req.body) };
  }
  const messages = parsed.flatMap((p) => (p.success ? [p.data] : []));
  if (batch && messages.some(isInitializeRequest)) {
    const message = 'Invalid Request: an initialization request must not be part of a batch';
    return { status: 400, code: -32600, message };
  }
  // Every id in the batch, the invalid elements' included: two answers with one id could not be told apart.
  const ids = raw.flatMap((m, i) => {
    const p = parsed[i]!;
    if (p.success) return isJSONRPCRequest(p.data) ? [p.data.id] : [];
    const id = requestId(m);
    return id === null ? [] : [id];
  });
  if (new Set(ids).size < ids.length)
    return { status: 400, code: -32600, message: 'Invalid Request: each request in a batch needs its own id' };
  return undefined;
}

/** Why a batch is refused whole: batches belong to 2025-03-26 only, never empty, at most MAX_BATCH_SIZE. */
export function batchRefusal(batch: unknown[], version: string | undefined): string | undefined {
  if (version !== undefined && version !== BATCH_VERSION)
    return `batches are not part of protocol version ${version} (only ${BATCH_VERSION}); send one message per POST`;
  if (batch.length === 0) return 'an empty batch; send at least one message';
  if (batch.length > MAX_BATCH_SIZE) return `Batch must not exceed ${MAX_BATCH_SIZE} messages`;
  return undefined;
}

const invalid = (id: RequestId | null): JSONRPCMessage =>
  ({
    jsonrpc: '2.0',
    id,
    error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' },
  }) as JSONRPCMessage;
