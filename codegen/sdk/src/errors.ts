/**
 * What a call can fail with. An answer from the server that is an error (4xx/5xx) is a
 * `ShipyardError` carrying the RFC 9457 problem; a request that got no answer (connection refused
 * or dropped, DNS, timeout) is a `ShipyardNetworkError` and never looks like a problem. Neither
 * holds the request or its headers, so the API key cannot end up in a log through them.
 */
import type { Problem as ContractProblem, ScopeId } from './generated/types.gen.js';
import { PROBLEM_SLUGS, type ProblemCode, type ProblemKind, type ProblemType } from './problem-types.js';

/**
 * A problem document as a client receives it: the contract's, with `type` and `code` open (the
 * catalogues may grow; a type or code a newer server sends is still a string), or `about:blank`
 * for an answer that was not a problem document. `code` is absent from servers before API 1.3.0.
 */
export type Problem = Omit<ContractProblem, 'type' | 'code'> & {
  type: ProblemType | 'about:blank';
  code?: ProblemCode;
};

const HIDDEN = { enumerable: false, writable: false, configurable: false } as const;

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if it has a usable one. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('Retry-After');
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Problem).status === 'number' &&
    typeof (body as Problem).title === 'string'
  );
}

/** The server answered with an error: the problem it sent, and what the response said around it. */
export class ShipyardError extends Error {
  override readonly name = 'ShipyardError';
  /** The HTTP status. */
  readonly status: number;
  /** A stable identifier of the kind of problem (`/problems/not-found`, …): compare it with `is()`. */
  readonly type: ProblemType;
  /**
   * Why, in one word to compare (`roadmap-full`, `username-taken`, …; else the type's slug): also
   * through `is()`. Undefined only from a server before API 1.3.0, or an answer that was not a problem.
   */
  declare readonly code?: ProblemCode;
  readonly title: string;
  readonly detail: string;
  /** For a validation problem, each thing that was wrong. */
  readonly errors: ReadonlyArray<{ path: string; message: string }>;
  /** The request path the problem is about. */
  declare readonly instance?: string;
  /** A 403's missing scope. */
  declare readonly requiredScope?: ScopeId;
  /** A 403's key scopes. */
  declare readonly grantedScopes?: ReadonlyArray<ScopeId>;
  /** The server's `X-Request-Id`: quote it when you report a problem. */
  declare readonly requestId?: string;
  /** The trace the request ran under, when the server runs with OpenTelemetry (API 1.3.0): its operator finds the request by it. */
  declare readonly traceId?: string;
  /** Seconds to wait before trying again (`Retry-After`, on 429, 503 and some 409s). */
  declare readonly retryAfter?: number;
  /** The problem document as the server sent it (or a stand-in when the body was not one). */
  readonly problem: Problem;
  /** The HTTP response (its body already read). */
  declare readonly response: Response;

  constructor(body: unknown, response: Response) {
    const problem: Problem = isProblem(body)
      ? body
      : {
          type: 'about:blank',
          title: response.statusText || `HTTP ${response.status}`,
          status: response.status,
          detail: typeof body === 'string' && body ? body.slice(0, 300) : `The server answered ${response.status}.`,
        };
    super(`${problem.title}: ${problem.detail}`);
    this.status = response.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    const self = this as { -readonly [K in keyof ShipyardError]: ShipyardError[K] };
    if (typeof problem.code === 'string') self.code = problem.code;
    if (problem.instance) self.instance = problem.instance;
    if (problem.requiredScope) self.requiredScope = problem.requiredScope;
    if (problem.grantedScopes) self.grantedScopes = problem.grantedScopes;
    const requestId = response.headers.get('X-Request-Id') ?? problem.requestId;
    if (requestId) self.requestId = requestId;
    if (problem.traceId) self.traceId = problem.traceId;
    const retryAfter = retryAfterSeconds(response.headers);
    if (retryAfter !== undefined) self.retryAfter = retryAfter;
    this.problem = problem;
    Object.defineProperty(this, 'response', { ...HIDDEN, value: response });
  }

  /**
   * True when this is the given kind of problem: its code (`err.is('roadmap-full')`), or its type
   * by slug (`err.is('conflict')`, true for every conflict whatever its code). A type is also
   * known in the absolute form servers before API 1.3.0 sent (`https://shipyard.dev/problems/<slug>`).
   */
  is(kind: ProblemKind): boolean {
    if (this.code === kind) return true;
    if (!(PROBLEM_SLUGS as readonly string[]).includes(kind)) return false;
    return this.type === `/problems/${kind}` || this.type === `https://shipyard.dev/problems/${kind}`;
  }
}

/** No answer came back: the server could not be reached, the connection dropped, or the response was unreadable. */
export class ShipyardNetworkError extends Error {
  override readonly name: string = 'ShipyardNetworkError';
  /** The method and URL (without its query string) of the request that failed. */
  readonly method: string;
  readonly url: string;
  /** How many times the request was sent. */
  readonly attempts: number;

  constructor(message: string, request: { method: string; url: string; attempts: number }, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.method = request.method;
    this.url = request.url;
    this.attempts = request.attempts;
  }
}

/** No answer within the request's timeout (`timeoutMs`). */
export class ShipyardTimeoutError extends ShipyardNetworkError {
  override readonly name = 'ShipyardTimeoutError';
  readonly timeoutMs: number;

  constructor(request: { method: string; url: string; attempts: number }, timeoutMs: number) {
    super(`No answer from ${request.method} ${request.url} within ${timeoutMs} ms.`, request);
    this.timeoutMs = timeoutMs;
  }
}
