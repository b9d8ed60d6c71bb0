/**
 * The headers a response sends, held to the ones the contract declares for its operation and
 * status: every server the harness starts records each response that breaks this, and fails its
 * test file when it closes. Over the whole suite's traffic, no response sends an API header the
 * contract does not declare (so the SDK and browser code can rely on the declared ones).
 *
 * Not API headers, and so not checked: what HTTP itself and the transport put on every message,
 * CORS, and the browser security policy every response carries (helmet).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { eachOperation, type OpenApiDocument } from '../src/kernel/contract.js';

const NOT_API = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'vary',
  'allow',
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
]);

type Response = { headers?: Record<string, unknown>; $ref?: string };

function declaredHeaders(doc: OpenApiDocument): Map<string, Map<string, Set<string>>> {
  const shared = (doc.components as { responses?: Record<string, Response> }).responses ?? {};
  const byOperation = new Map<string, Map<string, Set<string>>>();
  for (const { op } of eachOperation(doc)) {
    if (!op.operationId) continue;
    const statuses = new Map<string, Set<string>>();
    for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Response>)) {
      const resolved = response.$ref ? shared[response.$ref.split('/').pop()!] : response;
      statuses.set(status, new Set(Object.keys(resolved?.headers ?? {}).map((h) => h.toLowerCase())));
    }
    byOperation.set(op.operationId, statuses);
  }
  return byOperation;
}

export function headerChecker(doc: OpenApiDocument) {
  const declared = declaredHeaders(doc);
  const violations = new Set<string>();
  const check = (
    req: IncomingMessage & { openapi?: { schema?: { operationId?: string } }; originalUrl?: string },
    res: ServerResponse,
  ) => {
    // The MCP endpoint is served before the contract validator, which names every other operation.
    const mcp = req.method === 'POST' && (req.originalUrl ?? req.url)?.split('?')[0] === '/api/v1/mcp';
    const operationId = req.openapi?.schema?.operationId ?? (mcp ? 'mcpRequest' : undefined);
    if (!operationId) return; // not an operation: the web pages, an unknown path
    const allowed = declared.get(operationId)?.get(String(res.statusCode));
    if (!allowed) return; // an undeclared status is the response validator's to report
    for (const name of res.getHeaderNames()) {
      if (!NOT_API.has(name) && !name.startsWith('access-control-') && !allowed.has(name)) {
        violations.add(`${operationId} ${res.statusCode} sends ${name}, which the contract does not declare`);
      }
    }
  };
  return { check, violations };
}
