import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../kernel/actor.js';
import type { OperationObject } from '../kernel/contract.js';
import type { IdempotentRequest } from '../idempotency/idempotency.service.js';

declare global {
  namespace Express {
    interface Request {
      /** The request's own EntityManager fork (src/http/context.ts). */
      em: EntityManager;
      /** Who is calling, once authenticated (src/http/authenticate.ts). */
      actor?: Actor;
      /** Set by express-openapi-validator once it has matched the operation. */
      openapi?: {
        schema: OperationObject;
        openApiRoute: string;
        expressRoute: string;
        pathParams: Record<string, string>;
      };
      /** A create sent with an Idempotency-Key (src/http/idempotency.ts). */
      idempotency?: IdempotentRequest;
      /** A short id for the log line and the problem's instance. */
      requestId: string;
    }
  }
}
