/** Typed SQL for where each key was used: its sightings (addresses and clients). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { reads } from '../db/reads.js';

export type SightingKind = 'address' | 'client';

/** How many addresses and how many clients a key remembers: the page shows five of them. */
const REMEMBERED = 50;

/** Records a sighting (or moves its last-seen time on); true when the key had never had it. */
export async function upsertSighting(
  em: EntityManager,
  keyId: string,
  kind: SightingKind,
  value: string,
  at: Date,
): Promise<boolean> {
  const [row] = await reads(em)
    .insertInto('KeySighting')
    .values({ key: keyId, kind, value, firstSeenAt: at, lastSeenAt: at })
    .onConflict((oc) =>
      oc.columns(['key', 'kind', 'value']).doUpdateSet({
        lastSeenAt: sql`greatest(${sql.ref('excluded.last_seen_at')}, ${sql.ref('api_key_sightings.last_seen_at')})`,
      }),
    )
    // PostgreSQL's own mark of a row this statement inserted (an updated one has its xmax set).
    .returning(sql<boolean>`xmax = 0`.as('inserted'))
    .execute();
  return Boolean(row?.inserted);
}

/** How many sightings of each kind a key has. */
export async function sightingCounts(em: EntityManager, keyId: string): Promise<Record<SightingKind, number>> {
  const rows = await reads(em)
    .selectFrom('KeySighting')
    .select(['kind', (eb) => eb.fn.countAll<string>().as('count')])
    .where('key', '=', keyId)
    .groupBy('kind')
    .execute();
  const count = (kind: SightingKind) => Number(rows.find((r) => r.kind === kind)?.count ?? 0);
  return { address: count('address'), client: count('client') };
}

/** Keeps the REMEMBERED most recent sightings of one kind. */
export async function forgetOldestSightings(em: EntityManager, keyId: string, kind: SightingKind): Promise<void> {
  await reads(em)
    .deleteFrom('KeySighting')
    .where('key', '=', keyId)
    .where('kind', '=', kind)
    .where(
      'value',
      'not in',
      reads(em)
        .selectFrom('KeySighting')
        .select('value')
        .where('key', '=', keyId)
        .where('kind', '=', kind)
        .orderBy('lastSeenAt', 'desc')
        .limit(REMEMBERED),
    )
    .execute();
}

/** The last five addresses each key was used from, newest first, with when. */
export async function recentAddresses(
  em: EntityManager,
  keyIds: string[],
): Promise<Map<string, { address: string; at: Date }[]>> {
  const byKey = new Map<string, { address: string; at: Date }[]>();
  if (keyIds.length === 0) return byKey;
  const rows = await reads(em)
    .selectFrom('KeySighting')
    .select(['key as keyId', 'value as address', 'lastSeenAt as at'])
    .where('key', 'in', keyIds)
    .where('kind', '=', 'address')
    .orderBy('lastSeenAt', 'desc')
    .execute();
  for (const row of rows) {
    const list = byKey.get(row.keyId) ?? [];
    if (list.length < 5) list.push({ address: row.address, at: new Date(row.at) });
    byKey.set(row.keyId, list);
  }
  return byKey;
}
