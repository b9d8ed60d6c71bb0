/**
 * The problem types and codes a caller can meet, kept in step with the server's code by
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

/**
 * The problem codes more specific than a type that the server sends today (`code`, API 1.3.0);
 * a problem without one carries its type's slug as its code. New ones may be added.
 */
export const PROBLEM_CODES = [
  'unknown-project',
  'member-not-owner',
  'stranger-not-owner',
  'not-a-contributor',
  'not-author',
  'not-poster',
  'not-owner-of-members',
  'administrators-only',
  'project-slug-taken',
  'already-owner',
  'already-member',
  'owner-not-removable',
  'username-taken',
  'email-taken',
  'roadmap-full',
  'comment-deleted',
  'redeliveries-waiting',
  'key-limit-reached',
  'key-not-regenerable',
  'unknown-user',
  'unknown-media',
  'position-out-of-range',
  'roadmap-order-mismatch',
  'start-after-due',
  'reason-without-date-change',
  'unknown-milestone',
  'unknown-parent-comment',
  'parent-comment-deleted',
  'thread-too-deep',
  'webhook-limit-reached',
  'webhook-url-refused',
] as const;

/** A problem's `code`: a type's slug, a more specific code, or another one a newer server may send. */
export type ProblemCode = ProblemSlug | (typeof PROBLEM_CODES)[number] | (string & {});
/** What `err.is(…)` takes: a type's slug or a more specific code, as this version of the SDK knows them. */
export type ProblemKind = ProblemSlug | (typeof PROBLEM_CODES)[number];
