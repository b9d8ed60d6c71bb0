/**
 * One problem type for every error a client can cause. Throw it anywhere; the error handler
 * writes it as RFC 9457 application/problem+json.
 */
import type { KnownProblemCode, KnownProblemType, Problem } from '../../codegen/generated/api/types.gen.js';

export const PROBLEM_BASE = '/problems/';

/**
 * A problem type's slug: one of the contract's catalogue (x-problem-types), so that the server
 * cannot make a type the contract does not list (it would not compile).
 */
export type ProblemSlug = KnownProblemType extends `${typeof PROBLEM_BASE}${infer Slug}` ? Slug : never;

/**
 * Why a refusal happened, in a word a program can rely on: one of the contract's codes
 * (x-problem-codes) that refines a problem type, sent as the problem's `code`. The MCP server
 * also turns some into what an agent should do next (src/mcp/run-tool.ts).
 */
export type ProblemCode = Exclude<KnownProblemCode, ProblemSlug>;

export class ProblemError extends Error {
  /** Why, as a stable code more specific than the type (set with `because`). */
  reason?: ProblemCode;

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
  because(reason: ProblemCode): this {
    this.reason = reason;
    return this;
  }

  /** The problem's `code`: its reason, or else its type's slug. */
  get code(): KnownProblemCode {
    return this.reason ?? this.slug;
  }

  toProblem(instance?: string): Problem {
    return {
      type: `${PROBLEM_BASE}${this.slug}`,
      code: this.code,
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
