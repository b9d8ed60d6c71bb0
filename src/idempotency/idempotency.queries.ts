/** The idempotency claim's typed statements (src/db/reads.ts). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Kysely, sql } from 'kysely';
import { type DB, reads } from '../db/reads.js';

/** Sets `lock_timeout` for the rest of the transaction; what it was before. */
async function setLockTimeout(db: Kysely<DB>, value: string): Promise<string> {
  const { before } = await db
    .selectNoFrom((eb) => eb.fn<string>('current_setting', [sql.lit('lock_timeout')]).as('before'))
    .executeTakeFirstOrThrow();
  await db
    .selectNoFrom((eb) =>
      eb.fn<string>('set_config', [sql.lit('lock_timeout'), eb.val(value), sql.lit(true)]).as('now'),
    )
    .execute();
  return before;
}

/**
 * Inside a transaction: inserts the claim on (key, userId) unless one is there; whether it was
 * inserted. A first attempt's uncommitted claim makes the insert wait (PostgreSQL's unique
 * check) at most `waitMs`, then fail with a lock timeout (55P03).
 */
export async function insertClaim(
  tem: EntityManager,
  claim: { id: string; userId: string; apiKeyId: string; key: string; hash: string },
  waitMs: number,
): Promise<boolean> {
  const db = reads(tem);
  const before = await setLockTimeout(db, `${waitMs}ms`);
  const inserted = await db
    .insertInto('IdempotencyRecord')
    .values({
      id: claim.id,
      userId: claim.userId,
      apiKeyId: claim.apiKeyId,
      key: claim.key,
      requestHash: claim.hash,
      state: 'in_progress',
      status: null,
      responseBody: null,
      location: null,
      createdAt: new Date(),
    })
    .onConflict((oc) => oc.columns(['userId', 'key']).doNothing())
    .returning('id as id')
    .execute();
  await setLockTimeout(db, before);
  return inserted.length > 0;
}
