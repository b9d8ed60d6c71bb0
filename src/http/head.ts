/**
 * HEAD is the GET it names without the body (RFC 9110 §9.3.2: a server that answers GET answers
 * HEAD). The contract lists GETs only, so a HEAD is matched, authenticated, budgeted, scoped and
 * validated as its GET, then called HEAD again for what follows (the handler, the log, the
 * metrics, a refusal's text). Node sends no body in answer to a HEAD, whatever the handler writes:
 * the headers are the GET's, Content-Length and ETag included.
 */
import type { Request, RequestHandler } from 'express';

declare global {
  namespace Express {
    interface Request {
      /** A HEAD, matched as its GET while `method` says GET (headAsGet). */
      askedHead?: boolean;
    }
  }
}

/** Before the contract's validator: a HEAD goes through it as its GET. */
export const headAsGet: RequestHandler = function headAsGet(req, _res, next) {
  if (req.method === 'HEAD') {
    req.method = 'GET';
    req.askedHead = true;
  }
  next();
};

/** After the validator, and when it refused: the request is a HEAD again. */
export function headAgain(req: Request): void {
  if (req.askedHead) req.method = 'HEAD';
}

export const headAgainStage: RequestHandler = function headAgainStage(req, _res, next) {
  headAgain(req);
  next();
};
