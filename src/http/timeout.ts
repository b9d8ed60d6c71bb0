import type { RequestHandler } from 'express';
import { ProblemError } from './problem.js';

/**
 * A request that takes longer than `ms` to answer gets a 503 problem (retry later) instead of
 * holding the client; the work itself is not interrupted, but its late answer is dropped.
 * (Slow senders are cut off earlier by the HTTP server's own headers/request timeouts.)
 */
export function requestTimeout(ms: number): RequestHandler {
  return (_req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      next(
        new ProblemError(
          503,
          'timeout',
          'Request timed out',
          `The request took longer than ${ms / 1000} s; it may or may not have been applied. Retry in a moment (with an Idempotency-Key for creates).`,
          {},
          { 'Retry-After': '5' },
        ),
      );
    }, ms);
    const clear = () => clearTimeout(timer);
    res.on('finish', clear);
    res.on('close', clear);
    next();
  };
}
