/** Typed reads of the security log. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { hotWrite, reads } from '../db/reads.js';

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

export type SecurityRow = {
  id: string;
  userId: string;
  kind: string;
  occurredAt: Date;
  keyId: string | null;
  keyName: string | null;
  channel: string | null;
  client: string | null;
  address: string | null;
  operation: string | null;
  resource: string | null;
  resourceName: string | null;
  traceId: string | null;
};

/** Writes entries in one statement, however many (on `em`'s transaction if it has one). */
export async function insertSecurityEvents(em: EntityManager, rows: readonly SecurityRow[]): Promise<void> {
  if (rows.length > 0) await insertEntries(em, { rows: JSON.stringify(rows.map(entryJson)) });
}

/**
 * The entries as one JSON parameter, so that one prepared statement takes any number of them.
 * The recordset's columns are named apart from the entity's properties, which the ORM's plugin
 * would rewrite.
 */
const insertEntries = hotWrite(['rows'], (db, v: { rows: string }) =>
  db
    .insertInto('SecurityEvent')
    .columns([
      'id',
      'user',
      'kind',
      'occurredAt',
      'keyId',
      'keyName',
      'channel',
      'client',
      'address',
      'operation',
      'resource',
      'resourceName',
      'traceId',
    ])
    .expression((eb) =>
      eb
        .selectFrom(
          sql<EntryRow>`jsonb_to_recordset(${v.rows}::jsonb)`.as<'v'>(
            sql`v(e_id uuid, e_user uuid, e_kind text, e_at timestamptz, e_key uuid, e_key_name text, e_channel text, e_client text, e_address text, e_operation text, e_resource text, e_resource_name text, e_trace_id text)`,
          ),
        )
        .select([
          'v.e_id',
          'v.e_user',
          'v.e_kind',
          'v.e_at',
          'v.e_key',
          'v.e_key_name',
          'v.e_channel',
          'v.e_client',
          'v.e_address',
          'v.e_operation',
          'v.e_resource',
          'v.e_resource_name',
          'v.e_trace_id',
        ]),
    ),
);
type EntryRow = {
  e_id: string;
  e_user: string;
  e_kind: string;
  e_at: Date;
  e_key: string | null;
  e_key_name: string | null;
  e_channel: string | null;
  e_client: string | null;
  e_address: string | null;
  e_operation: string | null;
  e_resource: string | null;
  e_resource_name: string | null;
  e_trace_id: string | null;
};

/** A row as insertEntries reads it from its JSON parameter. */
const entryJson = (r: SecurityRow): EntryRow => ({
  e_id: r.id,
  e_user: r.userId,
  e_kind: r.kind,
  e_at: r.occurredAt,
  e_key: r.keyId,
  e_key_name: r.keyName,
  e_channel: r.channel,
  e_client: r.client,
  e_address: r.address,
  e_operation: r.operation,
  e_resource: r.resource,
  e_resource_name: r.resourceName,
  e_trace_id: r.traceId,
});
