import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../kernel/logger.js';
import { traceId } from '../telemetry/telemetry.js';

/** Per request: an id, its own EntityManager fork, and one access-log line when it ends. */
export function requestContext(orm: MikroORM, log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // Read now, at the application's level: a router mounted at a path (the MCP endpoint's)
    // strips its prefix from req.path and may still be inside when the response finishes.
    const path = req.path; // never the query string
    // Read while the request's span is current: the line below is written when the response ends.
    const trace = traceId();
    req.requestId = randomUUID().slice(0, 8);
    req.em = orm.em.fork();
    res.setHeader('X-Request-Id', req.requestId);
    res.on('finish', () => {
      log.info('request', {
        requestId: req.requestId,
        method: req.method,
        path,
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        keyId: req.actor?.keyId,
        ...(trace ? { traceId: trace } : {}),
      });
    });
    next();
  };
}
