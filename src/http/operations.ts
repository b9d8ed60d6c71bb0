/**
 * Binds each operation of the contract to its handler: the Express routes are exactly the
 * spec's operations, none missing and none extra.
 */
import { pipeline } from 'node:stream/promises';
import { Router, type Request, type Response } from 'express';
import type { Handler, Handlers, OperationId } from './handler.js';
import type { Operation } from './contract.js';

const toExpressPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

export function operationsRouter(operations: Operation[], handlers: Handlers): Router {
  const router = Router();
  const unknown = Object.keys(handlers).filter((id) => !operations.some((op) => op.operationId === id));
  if (unknown.length) throw new Error(`handlers for operations that are not in the contract: ${unknown.join(', ')}`);
  for (const op of operations) {
    if (op.access.kind === 'mcp') continue; // served by src/mcp/mcp.routes.ts, mounted before the validator
    const handler = handlers[op.operationId as OperationId] as Handler<OperationId> | undefined;
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    router[op.method](toExpressPath(op.path), async (req: Request, res: Response) => {
      if (!req.actor) throw new Error(`${op.operationId} reached its handler without an actor`);
      const reply = await handler({
        body: req.body, path: req.params as never, query: req.query as never, actor: req.actor, em: req.em, req, res,
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
  return router;
}
