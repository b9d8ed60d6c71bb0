/**
 * express-openapi-validator, through its public options. Our authentication and everything that
 * must come before request validation run as its security handlers (`validateSecurity.handlers`),
 * the stage it runs after matching the operation (404/405 for unknown routes) and before
 * validating the request (400). Request order is therefore 404/405 → 401 → 429 → 403 → the body
 * read (JSON: src/http/kit/json-body.ts) → 400.
 *
 * The validator re-creates a handler's error as its own (a status and a message); the problem
 * itself is kept on the request and `validatorProblem` gives it back. The validator checks for the
 * credential itself before calling a handler (no Authorization header, or another scheme; no
 * session cookie): those refusals are rebuilt here as ours.
 */
import { parse as legacyUrlParse } from 'node:url';
import type { Request, RequestHandler, Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { eachOperation, type OpenApiDocument } from '../kernel/contract.js';
import { authenticate, requireScope, sessionOnly, sessionRequired } from './authenticate.js';
import { badRequest, missingToken } from '../kernel/problem.js';
import { strictQueryIntegers } from './query-integers.js';
import { jsonBody } from './kit/json-body.js';
import { deprecation } from './deprecation.js';
import { parseCookies } from '../kernel/cookies.js';
import { chain } from './kit/chain.js';
import type { KeyCache } from '../keys/key-cache.js';
import type { KeyUse } from '../keys/key-use.js';
import type { FailedAuth } from './kit/budget-hooks.js';

declare global {
  namespace Express {
    interface Request {
      /** What a security handler refused the request with, whole (the validator keeps only its status and message). */
      securityProblem?: unknown;
      /** The cookies, read for the validator's session-cookie check (src/kernel/cookies.ts). */
      cookies?: Record<string, string>;
      /** Set once the operation's handler starts (src/http/operations.ts). */
      dispatched?: boolean;
    }
  }
}

/**
 * The validator reads the raw query string with Node's legacy `url.parse`, on every request that
 * has one. Until `url.parse` has been called once from outside node_modules (and has printed its
 * DEP0169 deprecation warning), Node captures a stack trace on every call to decide whether to
 * warn, on every request. One call here, with deprecation warnings muted for it only, settles
 * that once; what url.parse returns is unchanged.
 */
function settleUrlParseWarning(): void {
  const muted = process.noDeprecation;
  process.noDeprecation = true;
  try {
    legacyUrlParse('/');
  } finally {
    process.noDeprecation = muted;
  }
}

/**
 * Runs Express-style stages one after another as a promise; the first error rejects it. A stage
 * that calls `next` at once passes straight to the following one (no promise per stage on the
 * way); a second call to the same stage's `next` is ignored.
 */
function run(stages: RequestHandler[], req: Request, res: Response): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let at = 0;
    const step = (): void => {
      const stage = stages[at++];
      if (!stage) return resolve();
      let called = false;
      const next = (err?: unknown) => {
        if (called) return;
        called = true;
        if (err) reject(err);
        else step();
      };
      // What a stage throws or rejects with after it has passed the request on is not the chain's.
      try {
        const ran: unknown = stage(req, res, next);
        if (ran instanceof Promise) ran.catch((err: unknown) => called || reject(err));
      } catch (thrown) {
        if (!called) reject(thrown);
      }
    };
    step();
  });
}

export type ValidatorOptions = {
  uploadMaxBytes: number;
  budget: RequestHandler;
  failedAuth: FailedAuth;
  keys: KeyCache;
  /** Settings → Manage API keys, where a 401 for a key that stopped working sends its holder. */
  keysPage: string;
  /** Where each key's use is noted (its address, client and channel). */
  uses: KeyUse;
  /** Make every part's validator in the background, one per turn of the event loop (the server). */
  warm?: boolean;
};

export function contractValidator(doc: OpenApiDocument, opts: ValidatorOptions): RequestHandler[] {
  settleUrlParseWarning();
  const stages: RequestHandler[] = [
    deprecation(doc),
    authenticate(opts.keys, opts.failedAuth, opts.keysPage, opts.uses) as RequestHandler,
    opts.budget,
    requireScope as RequestHandler,
    strictQueryIntegers(doc),
    ...jsonBody(),
  ];
  const securityHandler = async (req: Request): Promise<boolean> => {
    try {
      await run(stages, req, req.res!);
      return true;
    } catch (err) {
      req.securityProblem = err;
      throw err;
    }
  };
  const readCookies: RequestHandler = (req, _res, next) => {
    req.cookies = parseCookies(req.headers.cookie);
    next();
  };
  // A public operation (the spec downloads) has no security handler to run: it is nobody's,
  // and spends its address's budget once the validator has passed it.
  const publicStages = [
    deprecation(doc),
    authenticate(opts.keys, opts.failedAuth, opts.keysPage, opts.uses) as RequestHandler,
    opts.budget,
  ];
  const publicOperation: RequestHandler = (req, res, next) => {
    if (req.openapi?.schema['x-public'] !== true) return next();
    run(publicStages, req, res).then(() => next(), next);
  };
  const validatorFor = (part: OpenApiDocument): RequestHandler =>
    chain(
      ...(OpenApiValidator.middleware({
        apiSpec: part as never,
        validateApiSpec: true,
        validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
        // Answers are checked where they are sent (src/http/answer-check.ts, docs/decisions/0019).
        validateResponses: false,
        validateSecurity: { handlers: { bearerAuth: securityHandler, sessionCookie: securityHandler } },
        ignoreUndocumented: false,
        validateFormats: true,
        // Full: a date is a day of the calendar (2027-02-30 is refused with a 400, not passed on to
        // PostgreSQL, which refused it with a 500); fast checks only the digits' places.
        ajvFormats: { mode: 'full' },
        // Multipart bodies (image uploads) are held in memory up to the upload limit: one file, no
        // other parts. A part of the contract that takes none has no multipart stage to pass.
        fileUploader: takesMultipart(part)
          ? { limits: { fileSize: opts.uploadMaxBytes, files: 1, fields: 0, parts: 1 } }
          : false,
      }) as unknown as RequestHandler[]),
    );
  return [readCookies, byPart(withoutOAuthAlternative(doc), validatorFor, opts.warm ?? false), publicOperation];
}

/** Whether an operation of `doc` takes a multipart/form-data body. */
function takesMultipart(doc: OpenApiDocument): boolean {
  return [...eachOperation(doc)].some(({ op }) => {
    const body = op.requestBody as { content?: Record<string, unknown> } | undefined;
    return body?.content?.['multipart/form-data'] !== undefined;
  });
}

/**
 * One validator per part of the contract: the paths that share a first segment and a number of
 * segments (/projects/{projectId} and /projects/{projectId}/members are two parts), chosen by the
 * request's path. The validator finds a request's operation by trying its paths one by one and
 * builds each path's matcher again on every try; in parts, a request tries the one or two paths
 * its own could be instead of all of them (docs/decisions/0005). A request no part can match is
 * the validator's own 404, made here.
 */
function byPart(
  doc: OpenApiDocument,
  validatorFor: (part: OpenApiDocument) => RequestHandler,
  warm: boolean,
): RequestHandler {
  const parts = new Map<string, Record<string, unknown>>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const part = partOf(path);
    parts.set(part, { ...parts.get(part), [path]: item });
  }
  // Each part's validator is made when a request first needs it, or (`warm`) one per turn of the
  // event loop after start: making one compiles the OpenAPI schema itself, on the event loop, and
  // all of them at once held it for seconds.
  const validators = new Map<string, RequestHandler>();
  const made = (part: string, paths: Record<string, unknown>): RequestHandler => {
    let validator = validators.get(part);
    if (!validator) {
      validator = validatorFor(withReferenced({ ...doc, paths } as OpenApiDocument));
      validators.set(part, validator);
    }
    return validator;
  };
  if (warm) {
    const pending = [...parts];
    const next = () => {
      const [part, paths] = pending.shift() ?? [];
      if (!part || !paths) return;
      made(part, paths);
      setImmediate(next).unref();
    };
    setImmediate(next).unref();
  }
  return (req, res, next) => {
    const part = partOf(req.path);
    const paths = parts.get(part);
    if (!paths) return next(new OpenApiValidator.error.NotFound({ path: req.path, message: 'not found' }));
    made(part, paths)(req, res, next);
  };
}

/**
 * `doc` with only the components its paths reach, through `$ref`s followed to the end (and every
 * security scheme), and without its events. Each validator prepares and compiles every component it is given, before its
 * first request and on the event loop: given all of them, the parts together took seconds.
 */
function withReferenced(doc: OpenApiDocument): OpenApiDocument {
  const all = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  const kept: Record<string, Record<string, unknown>> = { securitySchemes: { ...all.securitySchemes } };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/')) {
      const [kind, name] = ref.slice('#/components/'.length).split('/') as [string, string];
      if (!kept[kind]?.[name] && all[kind]?.[name] !== undefined) {
        kept[kind] = { ...kept[kind], [name]: all[kind][name] };
        visit(all[kind][name]);
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(doc.paths);
  // Events are sent, never received: a validator has no use for them.
  const { webhooks: _events, ...rest } = doc as OpenApiDocument & { webhooks?: unknown };
  return { ...rest, components: kept } as OpenApiDocument;
}

/**
 * The part a path belongs to: its first segment and how many segments it has, read as the
 * validator matches paths (case-insensitive, one trailing slash allowed, no slash inside a
 * parameter): "/projects/{projectId}/members" and "/Projects/42/members/" are both "projects/3".
 */
function partOf(path: string): string {
  const segments = path.replace(/(.)\/$/, '$1').split('/');
  return `${segments[1]?.toLowerCase()}/${segments.length - 1}`;
}

/**
 * The problem a validator error stands for: the one a security handler was refused with; for the
 * validator's own credential check, ours (and the address's failed-authentication budget spent);
 * a multipart body its parser could not read is the client's malformed request (400). Anything
 * else passes through as it is.
 */
export async function validatorProblem(err: unknown, req: Request, failedAuth: FailedAuth): Promise<unknown> {
  if (!(err instanceof Error)) return err;
  if (req.securityProblem && err !== req.securityProblem && (err as { status?: number }).status !== undefined)
    return req.securityProblem;
  const op = req.openapi?.schema;
  if (err instanceof OpenApiValidator.error.Unauthorized && op) {
    if (op['x-session-only'] === true && req.headers.authorization) return sessionOnly(String(op.operationId));
    const refusal =
      op['x-session-only'] === true
        ? sessionRequired()
        : missingToken(
            req.headers.authorization
              ? 'Use the Bearer scheme: `Authorization: Bearer shipyard_pat_…`.'
              : 'This request needs an API key: send `Authorization: Bearer shipyard_pat_…`.',
          );
    return failedAuth(req, refusal).catch(() => refusal);
  }
  if (!req.dispatched && err instanceof OpenApiValidator.error.InternalServerError && req.is('multipart/form-data')) {
    return badRequest('The multipart/form-data body could not be read: it is malformed or cut short.');
  }
  return err;
}

/**
 * The contract offers the OAuth scheme beside the bearer one; the token it gives is an ordinary
 * key, which the bearer scheme's handler authenticates. The validator is shown the bearer scheme
 * alone (its copy of the contract has no OAuth scheme), so that a refused key is counted and
 * answered once, not once per scheme.
 */
function withoutOAuthAlternative(doc: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(doc) as OpenApiDocument & {
    security?: Record<string, string[]>[];
    components?: { securitySchemes?: Record<string, unknown> };
  };
  copy.security = copy.security?.filter((requirement) => !('oauth2' in requirement));
  delete copy.components?.securitySchemes?.oauth2;
  return withQueryRules(copy);
}

/**
 * The contract's rule for query parameters an operation does not declare (`x-unknown-query-parameters`,
 * `refused` at the top), said to the validator in its own words on each operation that says
 * `ignored` (the public feeds). Any other value is a mistake in the contract, refused at start.
 */
function withQueryRules(doc: OpenApiDocument): OpenApiDocument {
  for (const { op } of eachOperation(doc)) {
    const rule = op['x-unknown-query-parameters'];
    if (rule === undefined || rule === 'refused') continue;
    if (rule !== 'ignored')
      throw new Error(`${op.operationId}: x-unknown-query-parameters must be refused or ignored, not ${String(rule)}`);
    op['x-eov-allow-unknown-query-parameters'] = true;
  }
  return doc;
}
