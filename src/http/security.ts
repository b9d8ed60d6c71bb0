/**
 * Security headers on every response (helmet, with a CSP that allows nothing: the API serves
 * data, not pages), and CORS for the API: any origin may call it with a key in the
 * Authorization header, but never with credentials (cookies), so a browser page elsewhere
 * cannot ride on someone's signed-in session. The MCP endpoint keeps its own rule: it answers
 * browsers from its allowed origins only (src/mcp/origins.ts).
 */
import type { RequestHandler } from 'express';
import helmet from 'helmet';
import { eachOperation, type OpenApiDocument } from '../kernel/contract.js';

export const securityHeaders = (): RequestHandler =>
  helmet({
    contentSecurityPolicy: {
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
    },
    crossOriginResourcePolicy: { policy: 'same-site' },
  });

/** Every response header the contract declares, so that browser code may read each of them. */
function declaredResponseHeaders(doc: OpenApiDocument): string[] {
  const names = new Map<string, string>();
  const visit = (response: { headers?: Record<string, unknown> } | undefined) => {
    for (const name of Object.keys(response?.headers ?? {})) names.set(name.toLowerCase(), name);
  };
  const components = doc.components as
    | { responses?: Record<string, { headers?: Record<string, unknown> }> }
    | undefined;
  for (const response of Object.values(components?.responses ?? {})) visit(response);
  for (const { op } of eachOperation(doc))
    for (const response of Object.values((op.responses ?? {}) as Record<string, { headers?: Record<string, unknown> }>))
      visit(response);
  // A deprecated operation's headers, whether or not one is deprecated today: a browser client
  // written now can read them the day one is.
  for (const name of ['Deprecation', 'Sunset', 'Link']) names.set(name.toLowerCase(), name);
  return [...names.values()].sort();
}

export function cors(doc: OpenApiDocument, { except }: { except?: string } = {}): RequestHandler {
  const exposed = declaredResponseHeaders(doc).join(', ');
  return (req, res, next) => {
    const path = req.path.toLowerCase(); // Express matches paths case-insensitively: so must this
    if (!req.headers.origin || (except && (path === except || path.startsWith(`${except}/`)))) return next();
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposed);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE');
      res.setHeader(
        'Access-Control-Allow-Headers',
        'Authorization, Content-Type, Idempotency-Key, If-None-Match, MCP-Protocol-Version, Accept',
      );
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
