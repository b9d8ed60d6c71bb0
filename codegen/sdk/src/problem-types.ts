/**
 * The problem types a caller can meet, kept in step with the server's code by
 * test/unit/sdk-problem-types.test.ts. Imports nothing, so that test can read it directly.
 */
/** The problem `type`s the server sends today (`/problems/<slug>`); new ones may be added. */
export const PROBLEM_SLUGS = [
  'validation',
  'malformed-json',
  'malformed-request',
  'invalid-query',
  'invalid-cursor',
  'request-rejected',
  'invalid-token',
  'insufficient-scope',
  'session-only',
  'session-required',
  'csrf-token-required',
  'forbidden',
  'not-found',
  'github-not-linked',
  'github-not-verified',
  'method-not-allowed',
  'not-acceptable',
  'conflict',
  'idempotency-in-progress',
  'idempotency-key-reused',
  'idempotency-resource-gone',
  'payload-too-large',
  'unsupported-media-type',
  'unprocessable',
  'image-too-large',
  'storage-quota-exceeded',
  'rate-limited',
  'internal',
  'unavailable',
  'busy',
  'timeout',
] as const;

export type ProblemSlug = (typeof PROBLEM_SLUGS)[number];
/** A known problem type URI, or another one a newer server may send. */
export type ProblemType = `/problems/${ProblemSlug}` | (string & {});
