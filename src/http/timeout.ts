import type { RequestHandler } from 'express';
import { ProblemError } from '../kernel/problem.js';

/** What a client that waited too long is told: the API's retry advice, or a person's. */
const DETAIL = {
  api: (s: number) =>
    `The request took longer than ${s} s; it may or may not have been applied. Retry in a moment (with an Idempotency-Key for creates).`,
  web: (s: number) =>
    `This page took longer than ${s} s to answer, so it was given up; what you sent may or may not have been saved. Reload the page in a moment to see, then try again.`,
};

/**
 * A request that takes longer than `ms` to answer gets a 503 problem (retry later) instead of
 * holding the client, on the API and on the web pages alike; the work itself is not interrupted,
 * but its late answer is dropped. (Slow senders are cut off earlier by the HTTP server's own
 * headers/request timeouts.)
 */
export function requestTimeout(ms: number, audience: keyof typeof DETAIL = 'api'): RequestHandler {
  return (_req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      next(
        new ProblemError(503, 'timeout', 'Request timed out', DETAIL[audience](ms / 1000), {}, { 'Retry-After': '5' }),
      );
    }, ms);
    const clear = () => clearTimeout(timer);
    res.on('finish', clear);
    res.on('close', clear);
    next();
  };
}
