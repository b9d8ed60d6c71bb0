/**
 * The one error handler: everything thrown becomes application/problem+json. Client mistakes
 * get their 4xx with what was wrong; anything else is logged and answered with a 500 that
 * never carries internal details.
 */
import { withResourceMetadata } from './kit/challenge.js';
import type { ErrorRequestHandler, Request } from 'express';
import { ProblemError, type ProblemSlug } from '../kernel/problem.js';
import { KEY_NOT_TAKEN, keyNotTaken } from './idempotency.js';
import type { Logger } from '../kernel/logger.js';
import type { AnswerCheck } from './answer-check.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { API_BASE } from '../kernel/contract.js';
import type { UnknownFields } from './unknown-fields.js';
import { traceId } from '../telemetry/telemetry.js';

type ValidationError = { path?: string; message?: string; errorCode?: string };
type HttpLikeError = Error & {
  status?: number;
  type?: string;
  errors?: ValidationError[];
  headers?: Record<string, string>;
};

const EOV_KINDS: Record<number, [slug: ProblemSlug, title: string]> = {
  400: ['validation', 'Invalid request'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
  406: ['not-acceptable', 'Not acceptable'],
  413: ['payload-too-large', 'Payload too large'],
  415: ['unsupported-media-type', 'Unsupported media type'],
};

export type ProblemOptions = {
  uploadMaxBytes: number;
  /** This API's protected resource metadata, named in each Bearer challenge when OAuth sign-in is on. */
  resourceMetadata?: string;
  /** The contract's patterns, each with what it means in words (src/kernel/contract.ts). */
  patternMessages?: Map<string, string>;
  /** A handler's problem checked against its operation's answers (VALIDATE_RESPONSES). */
  checkAnswer?: AnswerCheck;
  /** A refused body's unknown fields (./unknown-fields.ts). */
  unknownFields?: UnknownFields;
};

/** What a value of each format the contract uses looks like, said where one is refused. */
const FORMAT_EXAMPLES: Record<string, string> = {
  date: 'must be a date as YYYY-MM-DD, such as 2026-12-31',
  'date-time': 'must be an RFC 3339 date and time, such as 2026-11-22T10:15:00Z',
  uri: 'must be an absolute URL, such as https://example.com/',
  uuid: 'must be an id as the API gives it, such as 0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10',
  email: 'must be an email address, such as ada@example.com',
};

/** A validation error's message; for a pattern the contract explains, the explanation; for a format, an example. */
function inWords(e: ValidationError, patterns: Map<string, string> | undefined): string {
  const message = e.message ?? 'invalid';
  // A header the operation declares refused (`not: {}`): the validator only says "must NOT be valid".
  if (e.path === '/headers/idempotency-key' && message === 'must NOT be valid') return KEY_NOT_TAKEN;
  const format = /^must match format "([^"]+)"$/.exec(message)?.[1];
  if (format && FORMAT_EXAMPLES[format]) return FORMAT_EXAMPLES[format];
  if (e.errorCode !== 'pattern.openapi.validation' || !patterns) return message;
  // The validator (Ajv) says `must match pattern "<the pattern>"`.
  const pattern = /^must match pattern "(.*)"$/s.exec(message)?.[1];
  return (pattern !== undefined && patterns.get(pattern)) || message;
}

/**
 * For a query parameter that takes one value and was sent more than once (`?limit=10&limit=20`):
 * the validator sees a list and says only "must be integer". (A parameter that takes a list is
 * refused item by item, never with a type.)
 */
function sentTwice(e: ValidationError, req: Request): string | undefined {
  if (!/^must be (integer|number|string|boolean)$/.test(e.message ?? '')) return undefined;
  const name = /^\/query\/([^/]+)$/.exec(e.path ?? '')?.[1];
  const value = name === undefined ? undefined : (req.query as Record<string, unknown>)[name];
  return Array.isArray(value) ? `was sent ${value.length} times; send it once` : undefined;
}

/** For a path with an empty segment (`//`), what likely made it: a base URL that ends in a slash. */
export function emptySegmentHint(url: string): string {
  return /\/\//.test(url.split('?')[0]!)
    ? " Its path has an empty segment ('//'): is a slash doubled, as when a base URL that ends in '/' has a path added?"
    : '';
}

/**
 * The refusal's errors with the body's unknown fields named (./unknown-fields.ts): the
 * validator's own words for one it found ("must NOT have additional properties") give way to
 * these, and past the most it names, a count.
 */
function withUnknownFields(
  req: Request,
  unknown: UnknownFields | undefined,
  said: { path: string; message: string }[],
): { path: string; message: string }[] {
  const operationId = req.openapi?.schema.operationId;
  if (!unknown || !operationId) return said;
  const { named, more } = unknown(String(operationId), req.body);
  const errors = said.map((e) => {
    const ours = named.find((n) => n.at === e.path);
    return ours ? { path: ours.path, message: ours.message } : e;
  });
  for (const n of named) if (!said.some((e) => e.path === n.at)) errors.push({ path: n.path, message: n.message });
  if (more) errors.push({ path: '/body', message: `holds ${more} more fields it does not take` });
  return errors;
}

function fromClientError(err: HttpLikeError, req: Request, limits: ProblemOptions): ProblemError | undefined {
  const path = req.path;
  if (err.type === 'entity.parse.failed')
    return new ProblemError(400, 'malformed-json', 'Malformed JSON', 'The request body is not valid JSON.');
  if (err.type === 'entity.too.large')
    return new ProblemError(413, 'payload-too-large', 'Payload too large', 'The request body is larger than 1 MiB.');
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
    return new ProblemError(
      415,
      'unsupported-media-type',
      'Unsupported media type',
      'Send the body as UTF-8 application/json.',
    );
  }
  // The upload's parser counts parts, and says "too many" with a 413 (a 400 for a text part): an extra part is a
  // malformed request, not a large one.
  if ((err.status === 413 || err.status === 400) && /^too many (parts|files|fields)$/i.test(err.message))
    return new ProblemError(
      400,
      'validation',
      'Invalid request',
      'An upload has one part, the image in the form field `file`; this request has more. Send the image alone.',
      { errors: [{ path: '/body', message: 'has more than one part' }] },
    );
  const status = err.status;
  if (!status || status < 400 || status >= 500 || !EOV_KINDS[status]) return undefined;
  const [slug, title] = EOV_KINDS[status];
  const said = (err.errors ?? []).map((e) => ({
    path: e.path ?? '',
    message: sentTwice(e, req) ?? inWords(e, limits.patternMessages),
  }));
  const errors = status === 400 ? withUnknownFields(req, limits.unknownFields, said) : said;
  // An Idempotency-Key the operation declares it refuses, and nothing else wrong: said as what to do.
  if (
    status === 400 &&
    errors.length > 0 &&
    errors.every((e) => e.path === '/headers/idempotency-key' && e.message === KEY_NOT_TAKEN)
  )
    return keyNotTaken(String(req.openapi?.schema.operationId ?? 'This operation'));
  let detail = err.message;
  if (status === 400)
    detail = errors.length
      ? `The request does not match the API contract: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`
      : 'The request does not match the API contract.';
  if (status === 404)
    detail =
      path === '/'
        ? `There is no ${API_BASE} itself: its operations are under it, listed in ${API_BASE}/openapi.json and described at /docs.`
        : `There is no ${path} in this API.${emptySegmentHint(req.originalUrl)}`;
  let headers = err.headers ?? {};
  if (status === 405) {
    const allowed = (headers.Allow ?? headers.allow)?.split(/,\s*/);
    // A HEAD is answered wherever a GET is (./head.ts), though the contract lists only the GET.
    if (allowed?.includes('GET') && !allowed.includes('HEAD')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
    if (allowed)
      headers = {
        ...Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'allow')),
        Allow: allowed.join(', '),
      };
    detail = allowed
      ? `${path} does not support ${req.method}; it supports ${allowed.join(', ')}.`
      : `${path} does not support ${req.method}.`;
  }
  if (status === 415) {
    const accepted = Object.keys((req.openapi?.schema.requestBody as { content?: object } | undefined)?.content ?? {});
    detail = accepted.length
      ? `This operation takes a body of type ${accepted.join(' or ')}.`
      : 'This operation takes no body of that type.';
  }
  if (status === 413)
    detail = /file too large/i.test(err.message)
      ? `The upload is larger than ${limits.uploadMaxBytes} bytes.`
      : 'The request body is too large.';
  return new ProblemError(status, slug, title, detail, status === 400 && errors.length ? { errors } : {}, headers);
}

export const databaseUnavailable = () =>
  new ProblemError(
    503,
    'unavailable',
    'Service unavailable',
    'The database cannot be reached right now; nothing was changed. Retry in a few seconds.',
    {},
    { 'Retry-After': '5' },
  );

export function problemHandler(log: Logger, limits: ProblemOptions): ErrorRequestHandler {
  return (thrown: HttpLikeError, req, res, _next) => {
    let err = thrown;
    let problem =
      err instanceof ProblemError
        ? err
        : isDatabaseUnavailable(err)
          ? databaseUnavailable()
          : fromClientError(err, req, limits);
    // A handler's refusal is one of its operation's answers: checked as its other answers are.
    const body = problem && withIds(problem.toProblem(req.originalUrl.split('?')[0]), req);
    if (problem && req.dispatched && limits.checkAnswer)
      try {
        limits.checkAnswer(req, problem.status, body, 'application/problem+json');
      } catch (mismatch) {
        err = mismatch as HttpLikeError;
        problem = undefined;
      }
    if (problem?.slug === 'timeout') log.error('request timed out', { requestId: req.requestId, path: req.path });
    else if (problem?.slug === 'unavailable')
      log.error('database unavailable', { requestId: req.requestId, path: req.path, error: err });
    if (res.headersSent) {
      log.error('error after the response started', { requestId: req.requestId, error: thrown });
      res.end();
      return;
    }
    if (problem) {
      // Turned away before any work: its budget units go back (src/http/rate-limit.ts).
      if (problem.slug === 'busy' || problem.slug === 'unavailable') res.locals.costsNothing = true;
      res.set(withResourceMetadata(problem.headers, limits.resourceMetadata));
      res.status(problem.status).type('application/problem+json').json(body);
      return;
    }
    // A handler's problem that did not match the contract: logged with the mismatch, and the problem itself.
    const refusal = err === thrown ? {} : { refusal: thrown };
    log.error('unhandled error', { requestId: req.requestId, path: req.path, error: err, ...refusal });
    res
      .status(500)
      .type('application/problem+json')
      .json(
        withIds(
          new ProblemError(
            500,
            'internal',
            'Internal error',
            `Something went wrong on our side (request ${req.requestId}).`,
          ).toProblem(),
          req,
        ),
      );
  };
}

/** The problem with what finds its request again: its id, and its trace's when there is one. */
function withIds<T extends object>(problem: T, req: Request): T & { requestId?: string; traceId?: string } {
  const trace = traceId();
  return { ...problem, ...(req.requestId ? { requestId: req.requestId } : {}), ...(trace ? { traceId: trace } : {}) };
}
