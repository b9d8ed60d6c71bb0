/**
 * Which browser pages may call the MCP endpoint (the transport specification's MUST: validate
 * `Origin`, answer 403 when it is not allowed, against DNS rebinding). A request without `Origin`
 * comes from a program, not a page (CLI and desktop clients), and is served. A page's request is
 * served only from this service's own origin (PUBLIC_URL) or one MCP_ALLOWED_ORIGINS lists; those
 * get CORS headers naming their origin, never `*`. Comparing with the request's own `Host` would
 * not do: a rebound name sends a matching `Host` and `Origin`.
 */
import type { RequestHandler } from 'express';
import { rpcError } from './transport.js';

/** The names a browser may use for this machine; the same port on any of them is the same server. */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/**
 * This service's origin and the configured ones, normalised as `URL` writes an origin. An origin
 * on a loopback name stands for the others too: `http://localhost:3000` is also reached as
 * `http://127.0.0.1:3000` and `http://[::1]:3000`, and it is the same process either way.
 */
export function mcpOrigins(publicUrl: string | undefined, allowed: readonly string[] = []): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const configured of [...(publicUrl ? [publicUrl] : []), ...allowed]) {
    const url = new URL(configured);
    origins.add(url.origin);
    if (!LOOPBACK.includes(url.hostname)) continue;
    for (const name of LOOPBACK) {
      url.hostname = name;
      origins.add(url.origin);
    }
  }
  return origins;
}

/** An `Origin` header as `URL` writes it (case, default port, a stray trailing slash), or undefined. */
function normalised(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/** The response headers a browser client may read: its budget, when to retry, why a key was refused, the request's id. */
const EXPOSED = [
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'WWW-Authenticate',
  'X-Request-Id',
  'Shipyard-Key-Expiration',
].join(', ');

export function originGate(origins: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const known = normalised(origin);
    if (known === undefined || !origins.has(known)) {
      return rpcError(
        res,
        403,
        -32000,
        `Forbidden: requests from the web page at ${origin.slice(0, 200)} are not accepted. ` +
          'A browser-based MCP client must be served from this service or an origin listed in MCP_ALLOWED_ORIGINS.',
      );
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'POST');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, MCP-Protocol-Version');
      res.setHeader('Access-Control-Max-Age', '600');
      return void res.status(204).end();
    }
    next();
  };
}
