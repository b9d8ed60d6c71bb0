import type { RequestHandler } from 'express';
import { checkIdempotencyKey, createRequestHash } from '../idempotency/idempotency.service.js';
import { ProblemError } from '../kernel/problem.js';

type Parameter = { $ref?: string; name?: string; in?: string };
/** Whether the operation declares the Idempotency-Key header (createWebhook does not: its answer holds a secret, never stored). */
const declaresKey = (parameters: Parameter[] | undefined) =>
  (parameters ?? []).some(
    (p) => p.$ref?.endsWith('/IdempotencyKey') || (p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key'),
  );

/** What is said of an Idempotency-Key sent to a create that takes none, beside the header's path. */
export const KEY_NOT_TAKEN = 'this operation takes no Idempotency-Key';

/**
 * The refusal of an Idempotency-Key sent to a create that takes none: the contract declares it
 * (`IdempotencyKeyRefused`, `not: {}`), so the validator refuses it first, in these words.
 */
export const keyNotTaken = (operationId: string) =>
  new ProblemError(
    400,
    'validation',
    'Invalid request',
    `${operationId} takes no Idempotency-Key, so it cannot be made exactly once: send it without the header, and look before a retry whether the first try was made.`,
    { errors: [{ path: '/headers/idempotency-key', message: KEY_NOT_TAKEN }] },
  );

/**
 * For every POST that creates (its contract has a 201) and declares it, an optional
 * Idempotency-Key header: checked here and named on the request, so that the handler runs
 * once (`runWrite`, src/writes/writes.service.ts). A create that does not declare it refuses one
 * (400). Runs after authentication and validation, so only a valid, authorised request is
 * recorded.
 */
export function idempotency(): RequestHandler {
  return (req, _res, next) => {
    const key = req.header('idempotency-key');
    const op = req.openapi?.schema;
    const creates =
      req.method === 'POST' && op && Object.keys((op.responses as object | undefined) ?? {}).includes('201');
    if (key === undefined || !creates || !req.actor?.keyId) return next();
    // A create that cannot be made once only says so, rather than make it twice on a retry.
    if (!declaresKey(op.parameters as Parameter[] | undefined)) throw keyNotTaken(String(op.operationId));
    checkIdempotencyKey(key);
    const files = (req as { files?: { buffer: Buffer }[] }).files?.map((f) => f.buffer.toString('base64'));
    req.idempotency = {
      userId: req.actor.userId,
      apiKeyId: req.actor.keyId,
      key,
      // What was asked, as MCP tools that make the same thing say it too (src/mcp/run-tool.ts).
      hash: createRequestHash(String(op.operationId), req.openapi?.pathParams ?? {}, req.body, files),
    };
    next();
  };
}
