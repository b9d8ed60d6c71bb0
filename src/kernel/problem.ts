/**
 * One problem type for every error a client can cause. Throw it anywhere; the error handler
 * writes it as RFC 9457 application/problem+json.
 */
import type { KnownProblemType, Problem } from '../../codegen/generated/api/types.gen.js';

export const PROBLEM_BASE = '/problems/';

/**
 * A problem type's slug: one of the contract's catalogue (x-problem-types), so that the server
 * cannot make a type the contract does not list (it would not compile).
 */
export type ProblemSlug = KnownProblemType extends `${typeof PROBLEM_BASE}${infer Slug}` ? Slug : never;

/**
 * Why a refusal happened, in a word code can rely on: the MCP server turns it into what an agent
 * should do next (src/mcp/run-tool.ts). Not part of the problem document; the detail says it in words.
 */
export type Reason =
  /** The project does not exist, or the caller may not see it. */
  | 'unknown-project'
  /** A member of the project asked for what only its owner may do. */
  | 'member-not-owner'
  /** Someone who is neither owner nor member asked to change the project. */
  | 'stranger-not-owner'
  /** Someone who is neither owner nor member asked to post a build log to it. */
  | 'not-a-contributor';

export class ProblemError extends Error {
  /** Why, as a stable code (set with `because`). */
  reason?: Reason;

  constructor(
    readonly status: number,
    readonly slug: ProblemSlug,
    readonly title: string,
    readonly detail: string,
    readonly extra: Partial<Pick<Problem, 'errors' | 'requiredScope' | 'grantedScopes'>> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  /** The same error, with the code of why it happened. */
  because(reason: Reason): this {
    this.reason = reason;
    return this;
  }

  toProblem(instance?: string): Problem {
    return {
      type: `${PROBLEM_BASE}${this.slug}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(instance ? { instance } : {}),
      ...this.extra,
    };
  }
}

export const badRequest = (detail: string, errors?: Problem['errors']) =>
  new ProblemError(400, 'validation', 'Invalid request', detail, errors ? { errors } : {});
export const notFound = (detail: string) => new ProblemError(404, 'not-found', 'Not found', detail);
export const forbidden = (detail: string) => new ProblemError(403, 'forbidden', 'Forbidden', detail);
export const conflict = (detail: string) => new ProblemError(409, 'conflict', 'Conflict', detail);
export const unprocessable = (detail: string) =>
  new ProblemError(422, 'unprocessable', 'Unprocessable content', detail);
export const invalidToken = (detail: string) =>
  new ProblemError(
    401,
    'invalid-token',
    'Invalid API key',
    detail,
    {},
    { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  );
/** No key was sent at all (or under another scheme): the challenge carries no error code (RFC 6750 §3.1). */
export const missingToken = (detail: string) =>
  new ProblemError(401, 'invalid-token', 'API key required', detail, {}, { 'WWW-Authenticate': 'Bearer' });
