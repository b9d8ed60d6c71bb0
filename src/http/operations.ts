/**
 * Binds each operation of the contract to its handler, none missing and none extra. The
 * request reaches its handler by the operation express-openapi-validator matched (and
 * validated), by operationId: no second route matching, and no way for the two to disagree.
 */
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Handler, Handlers, OperationId } from './handler.js';
import type { Operation } from './contract.js';

type Bound = (req: Request, res: Response) => Promise<void>;

export function dispatchOperations(operations: Operation[], handlers: Handlers): RequestHandler {
  const bound = new Map<string, Bound>();
  const unknown = Object.keys(handlers).filter((id) => !operations.some((op) => op.operationId === id));
  if (unknown.length) throw new Error(`handlers for operations that are not in the contract: ${unknown.join(', ')}`);
  for (const op of operations) {
    if (op.access.kind === 'mcp') continue; // served by src/mcp/mcp.routes.ts, mounted before the validator
    const handler = handlers[op.operationId as OperationId] as Handler<OperationId> | undefined;
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    bound.set(op.operationId, async (req: Request, res: Response) => {
      if (!req.actor) throw new Error(`${op.operationId} reached its handler without an actor`);
      const reply = await handler({
        body: req.body, path: req.openapi!.pathParams as never, query: req.query as never, actor: req.actor, em: req.em, req, res,
      } as never);
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
        await pipeline(reply.stream, res);
        return;
      }
      if ('text' in reply) {
        res.status(reply.status).type(reply.contentType).send(reply.text);
        return;
      }
      if (reply.headers) res.set(reply.headers);
      res.status(reply.status).json(reply.body);
    });
  }
  return function dispatch(req: Request, res: Response, next: NextFunction) {
    const run = bound.get(req.openapi?.schema?.operationId ?? '');
    // The validator answers 404/405 for anything outside the contract, so this cannot be reached.
    if (!run) return next(new Error(`${req.method} ${req.path} reached dispatch without a matched operation`));
    run(req, res).catch(next);
  };
}
