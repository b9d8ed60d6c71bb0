import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { sql } from 'kysely';
import { hotRead, hotWrite, iso, reads } from '../db/reads.js';

export type AttemptRecord = {
  at: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** The receiver took it: the delivery is done. */
  delivered: boolean;
};

/**
 * Writes one attempt to the delivery's log and counts it on the delivery (delivered, when it
 * was), in one statement: the worker's commonest write, made once per attempt.
 */
export async function recordAttempt(em: EntityManager, deliveryId: string, a: AttemptRecord): Promise<void> {
  const { delivered, ...attempt } = a;
  await (delivered ? attemptDelivered : attemptFailed)(em, { ...attempt, id: uuidv7(), deliveryId });
}

type AttemptRow = Omit<AttemptRecord, 'delivered'> & { id: string; deliveryId: string };
const attemptStatement = (delivered: boolean) =>
  hotWrite(['id', 'deliveryId', 'at', 'statusCode', 'durationMs', 'error', 'responseExcerpt'], (db, a: AttemptRow) =>
    db
      .with('attempt', (db) =>
        db.insertInto('WebhookAttempt').values({
          id: a.id,
          delivery: a.deliveryId,
          at: a.at,
          statusCode: a.statusCode,
          durationMs: a.durationMs,
          error: a.error,
          responseExcerpt: a.responseExcerpt,
        }),
      )
      .updateTable('WebhookDelivery')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        lastAttemptAt: a.at,
        ...(delivered ? { state: 'delivered' as const, deliveredAt: sql<Date>`now()` } : {}),
      }))
      .where('id', '=', a.deliveryId),
  );
const attemptDelivered = attemptStatement(true);
const attemptFailed = attemptStatement(false);

/**
 * What one attempt at a delivery needs, in one statement: the delivery's state, its event as
 * the body is made of it, and its subscription's address, secrets and health. (A prepared read:
 * the worker makes it once per attempt.)
 */
export const deliveryToTry = hotRead(['deliveryId'], (db, v: { deliveryId: string }) =>
  db
    .selectFrom('WebhookDelivery as d')
    .innerJoin('WebhookEvent as e', 'e.id', 'd.event')
    .innerJoin('WebhookSubscription as s', 's.id', 'd.subscription')
    .select((eb) => [
      'd.id as id',
      'd.state as state',
      'd.manual as manual',
      'e.id as eventId',
      'e.type as type',
      iso('e.occurredAt').as('occurredAt'),
      'e.traceParent as traceParent',
      'e.projectId as projectId',
      'd.sequence as sequence',
      'e.data as data',
      's.id as subscriptionId',
      's.url as url',
      's.active as active',
      's.secret as secret',
      's.previousSecret as previousSecret',
      iso('s.previousSecretUntil').as('previousSecretUntil'),
      eb('s.failingSince', 'is not', null).as('failing'),
    ])
    .where('d.id', '=', v.deliveryId),
);

/** A delivery that will not be tried again (its subscription off, or its retries spent): failed, unless already settled. */
export async function giveUpDelivery(em: EntityManager, deliveryId: string): Promise<void> {
  await reads(em)
    .updateTable('WebhookDelivery')
    .set({ state: 'failed' })
    .where('id', '=', deliveryId)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * Takes, until this transaction ends, the relay's lock if it is free: one relay pass at a time on
 * the whole database, so that each subscription's deliveries are numbered in the order of its
 * events, even when several instances relay. Never waits for it (a waiting pass would hold a
 * pooled connection for nothing): whether it was taken.
 */
export async function tryHoldRelay(em: EntityManager): Promise<boolean> {
  const { rows } = await sql<{
    held: boolean;
  }>`select pg_try_advisory_xact_lock(hashtext('shipyard webhook relay')) as held`.execute(reads(em));
  return rows[0]?.held === true;
}

/** Takes the next `count` numbers of a subscription's deliveries: the first of them. */
export async function takeSequences(em: EntityManager, subscriptionId: string, count: number): Promise<number> {
  const row = await reads(em)
    .updateTable('WebhookSubscription')
    .set((eb) => ({ lastSequence: eb('lastSequence', '+', count) }))
    .where('id', '=', subscriptionId)
    .returning('lastSequence as last')
    .executeTakeFirstOrThrow();
  return Number(row.last) - count + 1;
}

/** A subscription's deliveries still waiting to be tried, oldest number first, but `except`. */
export async function pendingDeliveries(
  em: EntityManager,
  subscriptionId: string,
  except: string,
  limit: number,
): Promise<string[]> {
  const rows = await reads(em)
    .selectFrom('WebhookDelivery')
    .select('id as id')
    .where('subscription', '=', subscriptionId)
    .where('state', '=', 'pending')
    .where('id', '!=', except)
    .orderBy('sequence')
    .orderBy('createdAt')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
