/**
 * Idempotency keys (as Stripe and the IETF draft use them): the first successful response to a
 * create is stored for 24 hours and replayed for a retry with the same key and the same request;
 * the same key with a different request is refused (422). Records belong to the account, as
 * Stripe's do: one namespace for all its keys, over REST (`Idempotency-Key`) and MCP
 * (`idempotencyKey`) alike, a request being its operation, path parameters and body, so that a
 * retry through another key or the other channel is a replay too. A record whose resource has
 * since been deleted is never replayed: the retry is a 409 saying so. Records older than 24 hours
 * are swept.
 *
 * Exactly once: the record is written in the same transaction as the create itself, so the two
 * commit together or not at all, whatever fails in between (a crash, a lost connection, a
 * request deadline that answered 503 while the database was still working). A retry that
 * arrives while the first attempt's transaction is open waits for it on the record's unique
 * key, up to IN_PROGRESS_WAIT_MS, and then replays its outcome; a longer wait is a 409 with
 * Retry-After. An attempt that fails (any error, 4xx or 5xx) rolls back: nothing was created,
 * no record is kept, and a retry runs afresh.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { IdempotencyRecord } from './idempotency.entity.js';
import { insertClaim } from './idempotency.queries.js';
import { ProblemError } from '../kernel/problem.js';

const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** How long a retry waits for a first attempt still running before it is told to come back. */
const IN_PROGRESS_WAIT_MS = 2000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The same JSON value written the same way: object keys sorted, at every depth. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What was asked, compared by meaning: `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
const requestHash = (...parts: unknown[]) => createHash('sha256').update(canonicalJson(parts)).digest('hex');

/**
 * A create as the contract names it: its operation, path parameters and body (and the files of an
 * upload). REST and MCP both say it this way, so the same create is the same request through either.
 */
export const createRequestHash = (operationId: string, params: object, body: unknown, files?: string[]) =>
  requestHash(operationId, params, body ?? null, files ?? null);

export function checkIdempotencyKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new ProblemError(
      400,
      'validation',
      'Invalid request',
      'An Idempotency-Key is 1 to 255 visible ASCII characters (a UUID is a good choice).',
      {
        errors: [{ path: '/headers/idempotency-key', message: 'must be 1-255 visible ASCII characters' }],
      },
    );
  }
}

export type Replay = { status: number; body: unknown; location: string | null };
export type IdempotentRequest = { userId: string; apiKeyId: string; key: string; hash: string };
export type Once<T> = { kind: 'new'; result: T } | { kind: 'replay'; replay: Replay };

const inProgress = () =>
  new ProblemError(
    409,
    'idempotency-in-progress',
    'Request in progress',
    'A request with this Idempotency-Key is still being processed; retry in a moment to get its result.',
    {},
    { 'Retry-After': '1' },
  );

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === '55P03';

const resourceGone = (id: string) =>
  new ProblemError(
    409,
    'idempotency-resource-gone',
    'Created, then deleted',
    `This Idempotency-Key made ${id}, which has since been deleted; nothing was created again. Send a new key to create it anew.`,
  );

/** Removes the records older than 24 hours: no retry can replay them any more. */
export async function sweepIdempotencyRecords(em: EntityManager): Promise<number> {
  return em.nativeDelete(IdempotencyRecord, { createdAt: { $lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } });
}

/** The id of the resource a stored answer names, when it names one. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function resourceOf(response: Replay): string | null {
  const id = (response.body as { id?: unknown } | null)?.id;
  return response.status < 300 && typeof id === 'string' && UUID.test(id) ? id : null;
}

/**
 * Claims the key inside the transaction `em`, or returns the stored response to replay. The
 * insert waits on a first attempt's uncommitted record (PostgreSQL's unique check), so the
 * outcome it then sees is final.
 */
async function claim(
  em: EntityManager,
  request: IdempotentRequest,
): Promise<{ recordId: string } | { replay: Replay }> {
  const { userId, apiKeyId, key, hash } = request;
  await em.nativeDelete(IdempotencyRecord, {
    userId,
    key,
    createdAt: { $lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) },
  });
  const id = uuidv7();
  let inserted: boolean;
  try {
    inserted = await insertClaim(em, { id, userId, apiKeyId, key, hash }, IN_PROGRESS_WAIT_MS);
  } catch (err) {
    if (isLockTimeout(err)) throw inProgress();
    throw err;
  }
  if (inserted) return { recordId: id };
  const existing = await em.findOne(IdempotencyRecord, { userId, key });
  if (!existing) throw inProgress(); // expired and removed meanwhile: the retry will claim it
  if (existing.requestHash !== hash) {
    throw new ProblemError(
      422,
      'idempotency-key-reused',
      'Idempotency-Key reused',
      'This Idempotency-Key was already used for a different request; use a new key for a new request.',
    );
  }
  if (existing.state !== 'done') throw inProgress();
  if (existing.resourceGoneAt) throw resourceGone(existing.resourceId!);
  const status = existing.status ?? 200;
  return { replay: { status, body: asReplayed(status, existing.responseBody), location: existing.location ?? null } };
}

/**
 * A stored answer as it is replayed: a refusal kept before problems carried a `code` (API 1.3.0;
 * records live 24 hours, and an older instance may still be writing them during a deploy) gets
 * its type's slug as its code, which is what a refusal without a more specific one carries.
 */
function asReplayed(status: number, body: unknown): unknown {
  if (status < 400 || typeof body !== 'object' || body === null || 'code' in body) return body;
  const type = (body as { type?: unknown }).type;
  return typeof type === 'string' ? { ...body, code: type.split('/').at(-1) } : body;
}

/** What became of a create: its result, or the client error it was refused with. */
export type Outcome<T> = { result: T } | { refused: ProblemError };

/**
 * Runs `create` once for this key: in one transaction with the record of its response, or not
 * at all when a response is already stored. `stored` says what to keep of the outcome; a
 * refusal (a 4xx problem) it keeps is stored and thrown again once committed, and whatever the
 * create wrote before it was refused is undone (it runs in a savepoint). Anything else thrown
 * rolls the whole transaction back, the claim with it.
 */
export async function once<T>(
  root: EntityManager,
  request: IdempotentRequest,
  create: (em: EntityManager) => Promise<T>,
  stored: (outcome: Outcome<T>) => Replay | undefined,
): Promise<Once<T>> {
  const done = await root.transactional(async (em) => {
    const claimed = await claim(em, request);
    if ('replay' in claimed) return { kind: 'replay', replay: claimed.replay } as const;
    const keep = async (outcome: Outcome<T>) => {
      const response = stored(outcome);
      if (!response) return false;
      const { status, body, location } = response;
      await em.nativeUpdate(
        IdempotencyRecord,
        { id: claimed.recordId },
        { state: 'done', status, responseBody: body as object, location, resourceId: resourceOf(response) },
      );
      return true;
    };
    let result: T;
    try {
      result = await em.transactional((inner) => create(inner));
    } catch (err) {
      if (err instanceof ProblemError && err.status < 500 && (await keep({ refused: err })))
        return { kind: 'refused', error: err } as const;
      throw err;
    }
    await keep({ result });
    return { kind: 'new', result } as const;
  });
  if (done.kind === 'refused') throw done.error;
  return done;
}
