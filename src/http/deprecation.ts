/**
 * The deprecation policy on the wire (docs/api-changes.md): every response of an operation the
 * contract marks `deprecated: true` says so, with `Deprecation` (RFC 9745: the moment it was
 * deprecated, `x-deprecated-at`), `Sunset` (RFC 8594: the earliest it may go, `x-sunset`) and a
 * `Link` to its entry in the changelog, where what to use instead is said.
 */
import type { RequestHandler } from 'express';
import { eachOperation, type OpenApiDocument } from '../kernel/contract.js';

type Deprecated = { deprecated?: boolean; operationId?: string; 'x-deprecated-at'?: string; 'x-sunset'?: string };

function deprecationHeadersOf(op: Deprecated): Record<string, string> | undefined {
  if (op.deprecated !== true) return undefined;
  const since = Date.parse(op['x-deprecated-at'] ?? '');
  if (!Number.isFinite(since))
    throw new Error(`operation ${op.operationId} is deprecated without an x-deprecated-at date`);
  const headers: Record<string, string> = {
    Deprecation: `@${Math.floor(since / 1000)}`,
    // Its own entry in the changelog (/docs/changes, src/web/changes.page.ts): what to use instead.
    Link: `</docs/changes#deprecate-${op.operationId}>; rel="deprecation"; type="text/html"`,
  };
  const sunset = Date.parse(op['x-sunset'] ?? '');
  if (Number.isFinite(sunset)) headers.Sunset = new Date(sunset).toUTCString();
  return headers;
}

export function deprecation(doc: OpenApiDocument): RequestHandler {
  const byOperation = new Map<string, Record<string, string>>();
  for (const { op } of eachOperation(doc)) {
    const headers = deprecationHeadersOf(op as Deprecated);
    if (headers && op.operationId) byOperation.set(op.operationId, headers);
  }
  return function deprecation(req, res, next) {
    const headers = byOperation.get(req.openapi?.schema.operationId ?? '');
    if (headers) res.set(headers);
    next();
  };
}
