/**
 * Security headers on every response (helmet, with a CSP that allows nothing: the API serves
 * data, not pages), and CORS for the API: any origin may call it with a key in the
 * Authorization header, but never with credentials (cookies), so a browser page elsewhere
 * cannot ride on someone's signed-in session.
 */
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export const securityHeaders = (): RequestHandler =>
  helmet({
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-site' },
  });

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
