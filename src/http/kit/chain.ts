/**
 * Runs middleware in order as one Express layer. Express's router costs a few microseconds per
 * layer on every request (path matching, prefix trimming, promise checks); the API pipeline has
 * over a dozen stages, so it is one layer here. Semantics kept: `next(err)` skips to the error
 * handlers, a thrown error or a rejected promise is `next(err)`, and the stages run in order.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

export function chain(...stages: RequestHandler[]): RequestHandler {
  return chainStages(stages, undefined);
}

/**
 * A chain that answers its own errors with `onError`, every time one is raised, one raised after
 * an earlier error was handled included (a stage's `next(err)` called late): Express's router has
 * moved past its error handlers by then and would answer with its HTML page.
 */
export function chainWithErrors(onError: ErrorRequestHandler, ...stages: RequestHandler[]): RequestHandler {
  return chainStages(stages, onError);
}

function chainStages(stages: RequestHandler[], onError: ErrorRequestHandler | undefined): RequestHandler {
  return function pipeline(req: Request, res: Response, done: NextFunction): void {
    let at = 0;
    const fail = (err: unknown): void => {
      if (!onError) return done(err);
      try {
        onError(err, req, res, done);
      } catch (thrown) {
        done(thrown);
      }
    };
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return fail(err);
      const stage = stages[at++];
      if (!stage) return done();
      try {
        const ran: unknown = stage(req, res, next);
        if (ran instanceof Promise) ran.then(undefined, fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    next();
  };
}
