/**
 * Helpers for hand-written selects on hot paths. Measured in `make bench`: building a query
 * through the ORM costs about 0.9 ms of CPU per lookup on this kind of machine, a raw select
 * plus `em.map` (a managed entity, for paths that change it) about 0.4 ms, and leaving out
 * `em.map` (the row as it is) saves about 0.2 ms more: reads use rows, writes `em.map`.
 *
 * The column lists come from the entity metadata, so a new column is selected without a change
 * here; lazy columns (the search vectors) are left out, as `em.find` leaves them.
 */
import { createHash } from 'node:crypto';
import type { EntityManager, EntityName } from '@mikro-orm/postgresql';
import { isDatabaseUnavailable } from '../http/errors.js';
import { CompiledQuery } from 'kysely';

const cache = new Map<string, { sql: string; fields: string[] }>();

function columns(
  em: EntityManager,
  entity: EntityName<object>,
  alias: string,
  prefix: string,
): { sql: string; fields: string[] } {
  const meta = em.getMetadata().get(entity);
  const key = `${meta.className}|${alias}|${prefix}`;
  let hit = cache.get(key);
  if (!hit) {
    const fields = meta.props
      .filter(
        (p) =>
          !p.lazy &&
          p.persist !== false &&
          p.fieldNames?.length &&
          (p.kind === 'scalar' || p.kind === 'm:1' || (p.kind === '1:1' && p.owner)),
      )
      .flatMap((p) => p.fieldNames);
    hit = { sql: fields.map((f) => `${alias}."${f}" as "${prefix}${f}"`).join(', '), fields };
    cache.set(key, hit);
  }
  return hit;
}

/** `alias."col" as "prefixcol", …` for every eagerly loaded column of the entity. */
export function selectColumns(em: EntityManager, entity: EntityName<object>, alias: string, prefix = ''): string {
  return columns(em, entity, alias, prefix).sql;
}

/** The entity's columns out of a joined row, under their own names, ready for `em.map`. */
export function columnsFrom(
  em: EntityManager,
  entity: EntityName<object>,
  row: Record<string, unknown>,
  prefix: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of columns(em, entity, '', prefix).fields) out[f] = row[`${prefix}${f}`];
  return out;
}

/** A timestamptz column as the RFC 3339 UTC text the API returns (millisecond precision, like Date#toISOString). */
export const isoTimestamp = (column: string): string =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A timestamp as the presenters take it: an entity's Date, or a hot read's text from
 * `isoTimestamp`, which is already what the API returns and is passed through as it is
 * (parsing it into a Date to format it back cost about 0.3–0.6 µs per value: three values per
 * milestone, 50 milestones per roadmap page).
 */
export type Timestamp = Date | string;
export const isoString = (t: Timestamp): string => (typeof t === 'string' ? t : t.toISOString());

const statements = new Map<string, { name: string; text: string }>();
import { preparedOff } from './reads.js';

/**
 * A hot read as a named prepared statement on the ORM's own `pg` pool. `em.execute` sends the
 * values inlined into the text, so PostgreSQL parses and plans every call anew (half of a
 * one-row read's cost in PostgreSQL, measured); a prepared statement is parsed once per pooled
 * connection and its plan can be kept. `sql` is a fixed text with `?` placeholders (never one
 * inside a literal): each distinct text becomes one statement, named after its hash. Inside a
 * transaction the read must see the transaction's own writes and the embedded database has one
 * connection, so there it goes through `em.execute` on the transaction's connection; so it does
 * when prepared statements are turned off (`usePreparedStatements`).
 */
export async function preparedRows<R>(em: EntityManager, sql: string, params: unknown[]): Promise<R[]> {
  if (em.isInTransaction() || preparedOff(em)) return em.execute<R[]>(sql, params);
  let statement = statements.get(sql);
  if (!statement) {
    let n = 0;
    statement = {
      name: `hot_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`,
      text: sql.replace(/\?/g, () => `$${++n}`),
    };
    statements.set(sql, statement);
  }
  const pool = await em.getConnection().getNativeClient();
  // Checked out and given back by hand: `pool.query` would drop the connection on any error,
  // a bad value as much as a broken socket, and reconnect for the next read.
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return (await client.query({ ...statement, values: params })).rows as R[];
  } catch (err) {
    if (isDatabaseUnavailable(err)) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * A statement with its values bound as parameters (`$1…`), not written into its text as
 * `em.execute` does: on the request's own connection (its transaction, if any) through the
 * ORM's Kysely instance. `sql` has `?` placeholders (never one inside a literal).
 */
export async function boundRows<R>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<R[]> {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  return (await em.getKysely().executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
}
