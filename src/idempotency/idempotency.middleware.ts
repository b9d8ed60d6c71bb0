import type { RequestHandler } from 'express';
import { checkIdempotencyKey, claim, complete, release, requestHash } from './idempotency.service.js';

/**
 * For every POST that creates (its contract has a 201), an optional Idempotency-Key header.
 * Runs after authentication and validation, so only a valid, authorised request is recorded.
 */
export function idempotency(): RequestHandler {
  return async (req, res, next) => {
    const key = req.header('idempotency-key');
    const op = req.openapi?.schema;
    const creates = req.method === 'POST' && op && Object.keys((op.responses as object | undefined) ?? {}).includes('201');
    if (key === undefined || !creates || !req.actor?.keyId) return next();
    try {
      checkIdempotencyKey(key);
      const hash = requestHash(req.method, req.originalUrl.split('?')[0], req.body, (req as { files?: { buffer: Buffer }[] }).files?.map((f) => f.buffer.toString('base64')));
      const claimed = await claim(req.em, req.actor.keyId, key, hash);
      if (claimed.kind === 'replay') {
        const { status, body, location } = claimed.replay;
        res.setHeader('Idempotent-Replayed', 'true');
        if (location) res.setHeader('Location', location);
        if (status >= 400) res.type('application/problem+json');
        res.status(status).json(body);
        return;
      }
      // The response is stored before it is sent, so a retry that follows it is always a replay.
      let stored = false;
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        stored = true;
        const location = res.getHeader('location');
        void complete(req.em, claimed.recordId, res.statusCode, body ?? null, typeof location === 'string' ? location : null)
          .catch(() => undefined)
          .then(() => json(body));
        return res;
      };
      res.on('close', () => {
        if (!stored) void release(req.em, claimed.recordId).catch(() => undefined);
      });
      next();
    } catch (err) {
      next(err);
    }
  };
}
