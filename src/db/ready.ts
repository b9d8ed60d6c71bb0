import type { MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { hotRead } from './reads.js';
import { statementNamesFailedWithin } from './named-statements.js';

/** How long after a named statement failed for its name the database path counts as broken. */
const NAME_FAILURES_MS = 30_000;

/** A statement as the service's own hot reads are sent: named (prepared) when they are. */
const probe = hotRead([], (db) => db.selectNoFrom(sql.lit(1).as('one')));

export type DatabaseState = 'ok' | 'unreachable' | 'statements-fail';

/**
 * Whether the database answers the service's own kind of statement within two seconds, and
 * whether the service's statements have been failing for their names: a transaction pooler that
 * does not keep prepared statements, with DATABASE_PREPARED_STATEMENTS=true, answers a
 * `SELECT 1` but fails most requests.
 */
export async function databaseState(orm: MikroORM, timeoutMs = 2000): Promise<DatabaseState> {
  let timer: NodeJS.Timeout | undefined;
  const namesFailed = () =>
    statementNamesFailedWithin((orm.config.get('driverOptions') as { Client?: unknown }).Client, NAME_FAILURES_MS);
  try {
    const answered = await Promise.race([
      probe(orm.em.fork(), {}).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    if (!answered) return 'unreachable';
    return namesFailed() ? 'statements-fail' : 'ok';
  } catch {
    return namesFailed() ? 'statements-fail' : 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}
