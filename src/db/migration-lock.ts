/**
 * One migration at a time on a database: instances started together (a deploy of several, or a
 * crash loop) wait for one another here instead of racing to create the same tables (a duplicate
 * `pg_type` key, "relation mikro_orm_migrations already exists"). The lock is a PostgreSQL
 * session advisory lock, held on a connection of its own for as long as the migrations run, so
 * it needs a real session: the direct URL, past any transaction pooler. Whoever gets it second
 * finds nothing pending and goes on.
 */
import pg from 'pg';

/** The advisory lock's key: the same for every process of this service on one database. */
const MIGRATION_LOCK = "hashtext('shipyard migrations')";

export async function withMigrationLock<T>(url: string, work: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    application_name: 'shipyard-migrations',
  });
  holder.on('error', () => undefined);
  await holder.connect();
  try {
    await holder.query(`select pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      return await work();
    } finally {
      await holder.query(`select pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
    }
  } finally {
    await holder.end().catch(() => undefined);
  }
}
