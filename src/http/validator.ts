/**
 * express-openapi-validator, with our authentication and scope check placed where its own
 * security stage would run: after it has matched the operation (404/405 for unknown routes),
 * before it validates the request (400). Request order is therefore 404/405 → 401 → 429 → 403 →
 * the body read (JSON: src/http/json-body.ts) → 400.
 */
import { parse as legacyUrlParse } from 'node:url';
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { OpenApiDocument } from './contract.js';
import { authenticate, requireScope } from './authenticate.js';
import { badRequest } from './problem.js';
import { strictQueryIntegers } from './query-integers.js';
import { jsonBody } from './json-body.js';
import { deprecation } from './deprecation.js';
import type { KeyCache } from '../keys/key-cache.js';
import type { FailedAuth } from './rate-limit.js';

/**
 * The validator reads the raw query string with Node's legacy `url.parse`, on every request that
 * has one. Until `url.parse` has been called once from outside node_modules (and has printed its
 * DEP0169 deprecation warning), Node captures a stack trace on every call to decide whether to
 * warn: ~3 µs a call alone, and 221 ms of a list page's profile (~18 µs a request, under the
 * request's deeper stack and tsx's source maps). One call here, with deprecation warnings muted
 * for it only, settles that once; what url.parse returns is unchanged.
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

export function contractValidator(
  doc: OpenApiDocument,
  opts: { validateResponses: boolean; uploadMaxBytes: number; budget: RequestHandler; failedAuth: FailedAuth; keys: KeyCache },
): RequestHandler[] {
  settleUrlParseWarning();
  const chain = OpenApiValidator.middleware({
    apiSpec: doc as never,
    validateApiSpec: true,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: opts.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    ignoreUndocumented: false,
    validateFormats: true,
    // Multipart bodies (image uploads) are held in memory up to the upload limit: one file, no other parts.
    fileUploader: { limits: { fileSize: opts.uploadMaxBytes, files: 1, fields: 0, parts: 1 } },
  }) as unknown as RequestHandler[];
  const at = chain.findIndex((mw) => mw.name === 'securityMiddleware');
  if (at < 0 || chain[at - 1]?.name !== 'metadataMiddleware') {
    throw new Error('express-openapi-validator changed its middleware chain: cannot place authentication');
  }
  chain.splice(at, 1, deprecation(doc), authenticate(opts.keys, opts.failedAuth) as RequestHandler, opts.budget, requireScope as RequestHandler, strictQueryIntegers(doc), ...jsonBody());
  const multipart = chain.findIndex((mw) => mw.name === 'multipartMiddleware');
  if (multipart < 0) throw new Error('express-openapi-validator changed its middleware chain: no multipart stage');
  chain[multipart] = clientMultipartErrors(chain[multipart]!);
  return chain;
}

/**
 * The validator answers 500 for a multipart body it cannot parse (cut short, no boundary…):
 * that is the client's malformed request, so it becomes a 400.
 */
function clientMultipartErrors(inner: RequestHandler): RequestHandler {
  return function multipartMiddleware(req, res, next) {
    return inner(req, res, (err?: unknown) => {
      const e = err as { status?: number } | undefined;
      if (e && (e.status === undefined || e.status >= 500)) {
        return next(badRequest('The multipart/form-data body could not be read: it is malformed or cut short.'));
      }
      next(err as Error | undefined);
    });
  };
}
