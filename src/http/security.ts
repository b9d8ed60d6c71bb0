/**
 * Security headers on every response (helmet, with a CSP that allows nothing: the API serves
 * data, not pages), and CORS for the API: any origin may call it with a key in the
 * Authorization header, but never with credentials (cookies), so a browser page elsewhere
 * cannot ride on someone's signed-in session.
 */
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/** helmet's options: a CSP that allows nothing beyond helmet's defaults, resources for this site only. */
export const HELMET = {
  contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
  crossOriginResourcePolicy: { policy: 'same-site' as const },
};

type HeaderStep = [name: string, value: string | undefined];

/**
 * What helmet does to a response, recorded once: with this configuration (no nonce, nothing
 * read from the request) its headers are the same on every response.
 */
function recordHelmet(): HeaderStep[] {
  const steps: HeaderStep[] = [];
  const res = {
    setHeader: (name: string, value: unknown) => void steps.push([name, String(value)]),
    removeHeader: (name: string) => void steps.push([name, undefined]),
  };
  let done = false;
  helmet(HELMET)({} as never, res as never, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done || steps.length === 0) throw new Error('helmet did not answer synchronously with its headers');
  return steps;
}

/**
 * helmet's headers, set from the recording in one loop: running helmet's dozen middleware on
 * every request cost ~4% of a busy server's CPU for the same result (test/security.test.ts
 * checks the headers).
 */
export const securityHeaders = (): RequestHandler => {
  const steps = recordHelmet();
  return (_req, res, next) => {
    for (const [name, value] of steps) {
      if (value === undefined) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
};

const EXPOSED = ['Location', 'ETag', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Shipyard-Key-Expiration', 'X-Request-Id'].join(', ');

export const cors: RequestHandler = (req, res, next) => {
  if (!req.headers.origin) return next();
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key, If-None-Match, MCP-Protocol-Version, Accept');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
};
