/**
 * Idempotency keys (as Stripe and the IETF draft use them): the first response to a create is
 * stored for 24 hours and replayed for a retry with the same key and the same request; the same
 * key with a different request is refused (422), and a retry while the first is still running
 * gets 409. Records are per API key. A 5xx is not kept, so the client may retry it.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { IdempotencyRecord } from './idempotency.entity.js';
import { ProblemError } from '../http/problem.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const requestHash = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

export function checkIdempotencyKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new ProblemError(400, 'validation', 'Invalid request', 'An Idempotency-Key is 1 to 255 visible ASCII characters (a UUID is a good choice).', {
      errors: [{ path: '/header/Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }],
    });
  }
}

export type Replay = { status: number; body: unknown; location: string | null };
export type Claim = { kind: 'new'; recordId: string } | { kind: 'replay'; replay: Replay };

/** Claims the key for this request, or returns the stored response to replay. */
export async function claim(root: EntityManager, apiKeyId: string, key: string, hash: string): Promise<Claim> {
  const em = root.fork();
  const cutoff = new Date(Date.now() - IDEMPOTENCY_TTL_MS);
  await em.nativeDelete(IdempotencyRecord, { apiKeyId, key, createdAt: { $lt: cutoff } }); // expired: forget it
  const id = uuidv7();
  const inserted = await em.execute(
    `insert into idempotency_records (id, api_key_id, key, request_hash, state, created_at) values (?, ?, ?, ?, 'in_progress', now())
     on conflict (api_key_id, key) do nothing returning id`,
    [id, apiKeyId, key, hash],
  );
  if (inserted.length) return { kind: 'new', recordId: id };
  const existing = await em.findOne(IdempotencyRecord, { apiKeyId, key });
  if (!existing) return claim(root, apiKeyId, key, hash); // removed meanwhile: try again
  if (existing.requestHash !== hash) {
    throw new ProblemError(422, 'idempotency-key-reused', 'Idempotency-Key reused',
      'This Idempotency-Key was already used for a different request; use a new key for a new request.');
  }
  if (existing.state === 'in_progress') {
    throw new ProblemError(409, 'idempotency-in-progress', 'Request in progress',
      'A request with this Idempotency-Key is still being processed; retry in a moment.', {}, { 'Retry-After': '1' });
  }
  return { kind: 'replay', replay: { status: existing.status ?? 200, body: existing.responseBody, location: existing.location ?? null } };
}

export async function complete(root: EntityManager, recordId: string, status: number, body: unknown, location: string | null): Promise<void> {
  const em = root.fork();
  if (status >= 500) {
    await em.nativeDelete(IdempotencyRecord, { id: recordId });
    return;
  }
  await em.nativeUpdate(IdempotencyRecord, { id: recordId }, { state: 'done', status, responseBody: body as object, location });
}

export async function release(root: EntityManager, recordId: string): Promise<void> {
  await root.fork().nativeDelete(IdempotencyRecord, { id: recordId });
}
