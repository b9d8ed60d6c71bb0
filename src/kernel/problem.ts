/**
 * One problem type for every error a client can cause. Throw it anywhere; the error handler
 * writes it as RFC 9457 application/problem+json.
 */
import type { Problem } from '../../codegen/generated/api/types.gen.js';

export const PROBLEM_BASE = 'https://shipyard.dev/problems/';

export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly extra: Partial<Pick<Problem, 'errors' | 'requiredScope' | 'grantedScopes'>> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  toProblem(instance?: string): Problem {
    return {
      type: PROBLEM_BASE + this.slug,
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
