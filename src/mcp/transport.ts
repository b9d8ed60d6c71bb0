/**
 * The MCP endpoint's transport: Streamable HTTP, stateless, JSON responses only — the subset
 * this server speaks — on Express's own request and response. It replaces the SDK's
 * StreamableHTTPServerTransport, which converts every Node request into a Fetch Request and
 * every answer back (through @hono/node-server) and keeps stream bookkeeping a stateless JSON
 * server never uses: that cost MCP `get_roadmap` 10–25% of its throughput (README, Performance,
 * item 17). It sits behind the SDK's own `Transport` interface, under the SDK's `Server`
 * (./server.ts).
 *
 * The POST rules are the SDK transport's, with its status codes and messages (test/mcp.test.ts
 * checks each): 406 unless Accept lists application/json and text/event-stream, 415 for a body
 * that is not application/json, 400 -32700 for a message that is not JSON-RPC, 400 -32600 for a
 * batch over 100 messages or an initialize inside a batch (and, ours, for two requests with one
 * id: they could not be told apart), 202 with no body when nothing in it
 * is a request, else one JSON answer (an array for a batch). The protocol version header is
 * checked before this, by the router. A stateless server has no stream to send anything else
 * on, so messages the server would send outside a response (progress, logging) are dropped.
 */
import type { Request, Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import {
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
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

  /** Answers one POST: its body already parsed by express.json(). */
  async handlePost(req: Request, res: Response): Promise<void> {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return rpcError(
        res,
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      return rpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const batch = Array.isArray(req.body);
    const raw: unknown[] = batch ? req.body : [req.body];
    if (raw.length > MAX_BATCH_SIZE) {
      return rpcError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    const messages: JSONRPCMessage[] = [];
    for (const m of raw) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) return rpcError(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    if (messages.length > 1 && messages.some(isInitializeRequest)) {
      return rpcError(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
    }
    const requests = messages.filter(isJSONRPCRequest);
    if (new Set(requests.map((r) => r.id)).size < requests.length) {
      return rpcError(res, 400, -32600, 'Invalid Request: each request in a batch needs its own id');
    }
    const answers = requests.map((r) => new Promise<JSONRPCMessage>((resolve) => this.waiting.set(r.id, resolve)));
    for (const m of messages) this.onmessage?.(m);
    if (answers.length === 0) return void res.status(202).end();
    const all = await Promise.race([Promise.all(answers), this.ended]);
    if (!all || this.closed || res.writableEnded) return;
    res.status(200).json(batch ? all : all[0]);
  }
}
