/**
 * express-openapi-validator, with our authentication and scope check placed where its own
 * security stage would run: after it has matched the operation (404/405 for unknown routes),
 * before it validates the request (400). Request order is therefore 404/405 → 401 → 403 → 400.
 */
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { OpenApiDocument } from './contract.js';
import { authenticate, requireScope } from './authenticate.js';

export function contractValidator(doc: OpenApiDocument, opts: { validateResponses: boolean }): RequestHandler[] {
  const chain = OpenApiValidator.middleware({
    apiSpec: doc as never,
    validateApiSpec: true,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: true },
    validateResponses: opts.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    ignoreUndocumented: false,
    validateFormats: true,
  }) as unknown as RequestHandler[];
  const at = chain.findIndex((mw) => mw.name === 'securityMiddleware');
  if (at < 0 || chain[at - 1]?.name !== 'metadataMiddleware') {
    throw new Error('express-openapi-validator changed its middleware chain: cannot place authentication');
  }
  chain.splice(at, 1, authenticate as RequestHandler, requireScope as RequestHandler);
  return chain;
}
