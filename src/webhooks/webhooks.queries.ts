import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { reads } from '../db/reads.js';

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
  await reads(em)
    .with('attempt', (db) =>
      db.insertInto('WebhookAttempt').values({
        id: uuidv7(),
        delivery: deliveryId,
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
      ...(a.delivered ? { state: 'delivered' as const, deliveredAt: new Date() } : {}),
    }))
    .where('id', '=', deliveryId)
    .execute();
}
