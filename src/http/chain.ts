/**
 * Runs middleware in order as one Express layer. Express's router costs a few microseconds per
 * layer on every request (path matching, prefix trimming, promise checks); the API pipeline has
 * over a dozen stages, so it is one layer here. Semantics kept: `next(err)` skips to the error
 * handlers, a thrown error or a rejected promise is `next(err)`, and the stages run in order.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function chain(...stages: RequestHandler[]): RequestHandler {
  return function pipeline(req: Request, res: Response, done: NextFunction): void {
    let at = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return done(err);
      const stage = stages[at++];
      if (!stage) return done();
      try {
        const ran: unknown = stage(req, res, next);
        if (ran instanceof Promise) ran.then(undefined, done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
