/** Typed reads of the security log. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { reads } from '../db/reads.js';

/** Keys that expired between `since` and `now`, unrevoked, whose expiry is not in the log yet. */
export async function keysExpiredUnlogged(
  em: EntityManager,
  since: Date,
  now: Date,
): Promise<{ id: string; userId: string; name: string; expiresAt: string }[]> {
  return reads(em)
    .selectFrom('ApiKey as k')
    .select(['k.id as id', 'k.user as userId', 'k.name as name', 'k.expiresAt as expiresAt'])
    .where('k.expiresAt', '<=', now)
    .where('k.expiresAt', '>', since)
    .where('k.revokedAt', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('SecurityEvent as e')
            .select('e.id')
            .whereRef('e.keyId', '=', 'k.id')
            .where('e.kind', '=', 'key.expired'),
        ),
      ),
    )
    .limit(1000)
    .execute() as never;
}

/** The sweep's lock, for the rest of the caller's transaction; false when another instance holds it. */
export async function sweepLock(em: EntityManager): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(hashtext('shipyard security log sweep')) as locked`.execute(reads(em));
  return rows[0]?.locked === true;
}
