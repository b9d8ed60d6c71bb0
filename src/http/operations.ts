/**
 * Binds each operation of the contract to its handler, none missing and none extra. The
 * request reaches its handler by the operation express-openapi-validator matched (and
 * validated), by operationId: no second route matching, and no way for the two to disagree.
 */
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Handler, Handlers, OperationId, Reply } from './kit/handler.js';
import type { Outcome, Replay } from '../idempotency/idempotency.service.js';
import { API_BASE, patternMessages, SERVED, type Operation } from '../kernel/contract.js';
import { nameRoute } from '../telemetry/telemetry.js';
import { badRequest } from '../kernel/problem.js';
import { LINE_PATTERN, linePaths, notLinesAt, type LinePath } from '../kernel/text.js';
import type { Logger } from '../kernel/logger.js';
import { resourceNameOf } from '../security-log/security-log.service.js';
import { runWrite, type Written } from '../writes/writes.service.js';
import { restUse } from './authenticate.js';
import type { AnswerCheck } from './answer-check.js';

type Bound = (req: Request, res: Response) => Promise<void>;

/** What a create's idempotency record keeps: its reply, or the problem it was refused with. */
const stored =
  (instance: string) =>
  (outcome: Outcome<Reply<OperationId>>): Replay => {
    if ('refused' in outcome)
      return { status: outcome.refused.status, body: outcome.refused.toProblem(instance), location: null };
    const reply = outcome.result;
    if (!('body' in reply)) throw new Error('a create with an Idempotency-Key answered without a JSON body');
    const location = reply.headers?.Location;
    return { status: reply.status, body: reply.body, location: typeof location === 'string' ? location : null };
  };

function replay(req: Request, res: Response, { status, body, location }: Replay, check?: AnswerCheck): void {
  if (res.headersSent) return;
  check?.(req, status, body, status >= 400 ? 'application/problem+json' : undefined);
  res.setHeader('Idempotent-Replayed', 'true');
  if (location) res.setHeader('Location', location);
  if (status >= 400) res.type('application/problem+json');
  res.status(status).json(body);
}

/** `check`: each JSON answer checked against the contract before it is sent (VALIDATE_RESPONSES). */
export function dispatchOperations(
  operations: Operation[],
  handlers: Handlers,
  log: Logger,
  check?: AnswerCheck,
): RequestHandler {
  const bound = new Map<string, Bound>();
  const unknown = Object.keys(handlers).filter((id) => !operations.some((op) => op.operationId === id));
  if (unknown.length) throw new Error(`handlers for operations that are not in the contract: ${unknown.join(', ')}`);
  for (const op of operations) {
    if (op.access.kind === 'mcp') continue; // served by src/mcp/mcp.routes.ts, mounted before the validator
    const handler = handlers[op.operationId as OperationId] as Handler<OperationId> | undefined;
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    bound.set(op.operationId, bind(op, handler, log, bodyLines(op), check));
  }
  return function dispatch(req: Request, res: Response, next: NextFunction) {
    const run = bound.get(req.openapi?.schema?.operationId ?? '');
    // The validator answers 404/405 for anything outside the contract, so this cannot be reached.
    if (!run) return next(new Error(`${req.method} ${req.path} reached dispatch without a matched operation`));
    run(req, res).catch(next);
  };
}

/** The operation's path as the contract writes it, under the API's base: what names its request's span and metric. */
export const routeOf = (op: Operation): string => `${API_BASE}${op.path}`;

/** What the contract says of a line that breaks its rule (its `x-pattern-message`). */
const LINE_MESSAGE =
  patternMessages(SERVED).get(LINE_PATTERN) ?? 'must be one line with at least one visible character';

/** Where the operation's JSON body holds one-line text (src/kernel/text.ts). */
function bodyLines(op: Operation): LinePath[] {
  const item = SERVED.paths[op.path]?.[op.method] as
    | { requestBody?: { content?: Record<string, { schema?: unknown }> } }
    | undefined;
  const schema = item?.requestBody?.content?.['application/json']?.schema;
  return schema ? linePaths(schema, SERVED) : [];
}

/**
 * A line the contract's pattern let through that holds nothing visible by Unicode's properties
 * (beyond the basic plane, which the pattern cannot name): refused as the pattern would be.
 */
function refuseInvisibleLines(body: unknown, lines: readonly LinePath[]): void {
  const bad = lines.length ? notLinesAt(body, lines) : [];
  if (!bad.length) return;
  const errors = bad.map((p) => ({ path: `/body${p}`, message: LINE_MESSAGE }));
  throw badRequest(
    `The request does not match the API contract: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`,
    errors,
  );
}

/** The handler called with the validated request, once only for a create with an Idempotency-Key. */
function bind(
  op: Operation,
  handler: Handler<OperationId>,
  log: Logger,
  lines: LinePath[],
  check: AnswerCheck | undefined,
): Bound {
  const { operationId } = op;
  const route = routeOf(op);
  // A read changes nothing, whatever method asked for it (a HEAD is its GET): no log entry.
  const reads = op.method === 'get';
  return async (req, res) => {
    nameRoute(route);
    const actor = req.actor;
    if (!actor) throw new Error(`${operationId} reached its handler without an actor`);
    refuseInvisibleLines(req.body, lines);
    req.dispatched = true;
    const path = req.originalUrl.split('?')[0]!;
    const outcome = await runWrite<Reply<OperationId>>(
      {
        em: req.em,
        actor,
        operation: operationId,
        origin: restUse(req, actor),
        idempotency: req.idempotency && { request: req.idempotency, stored: stored(path) },
        written: (reply) => (!reads && reply.status < 300 ? written(reply, path) : undefined),
        logFailed: (error) =>
          log.error('a write could not be put in the security log', {
            requestId: req.requestId,
            operation: operationId,
            error,
          }),
      },
      (em: EntityManager) =>
        handler({
          body: req.body,
          path: req.openapi!.pathParams as never,
          query: req.query as never,
          actor,
          em,
          req,
          res,
        } as never),
    );
    if (outcome.kind === 'replay') return replay(req, res, outcome.replay, check);
    // The request deadline may have answered meanwhile (503); what was done stays done.
    if (!res.headersSent) await send(req, res, outcome.result, check);
  };
}

/**
 * What a REST write's security-log entry names: where the answer points (a create's Location),
 * or the path written to; and the name or title of what it wrote or removed.
 */
function written(reply: Reply<OperationId>, path: string): Written {
  const location = 'headers' in reply ? reply.headers?.Location : undefined;
  return {
    resource: typeof location === 'string' ? location : path,
    resourceName: 'removed' in reply ? reply.removed : 'body' in reply ? resourceNameOf(reply.body) : undefined,
  };
}

/** A handler's reply as HTTP: no body, a stream, a text, or JSON (checked against the contract on its way out). */
async function send(req: Request, res: Response, reply: Reply<OperationId>, check?: AnswerCheck): Promise<void> {
  if (reply.status === 204) {
    res.status(204).end();
    return;
  }
  if (reply.status === 304) {
    res.status(304).set(reply.headers).end();
    return;
  }
  if ('stream' in reply) {
    res.status(reply.status).set(reply.headers);
    await pipeline(reply.stream, res).catch((err: NodeJS.ErrnoException) => {
      // The client went away before the last byte: nothing to answer, nothing to report.
      if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    });
    return;
  }
  if ('text' in reply) {
    if (reply.headers) res.set(reply.headers);
    res.status(reply.status).type(reply.contentType).send(reply.text);
    return;
  }
  check?.(req, reply.status, reply.body);
  if (reply.headers) res.set(reply.headers);
  res.status(reply.status).json(reply.body);
}
