/**
 * What lies between this service and PostgreSQL, found out at start: whether named prepared
 * statements survive from one of its transactions to the next. Straight to PostgreSQL, or through
 * a session pooler, a client connection is one server session, and they do. Through a transaction
 * pooler (PgBouncer's `pool_mode = transaction`) each transaction may run on another server
 * connection, where a name is unknown ("prepared statement … does not exist") or already taken
 * by another client ("already exists"), unless the pooler carries them itself (PgBouncer 1.21+
 * with `max_prepared_statements`).
 *
 * Two client connections show which. A holds a transaction open (and with it a server
 * connection, behind a pooler); B prepares a named statement; A ends its transaction, which gives
 * its server connection back to a pooler, where it is the one handed out next; B runs its
 * statement again. Straight to PostgreSQL, B's session is the same both times. Behind a
 * transaction pooler, B's second transaction runs on A's former server connection: a pooler that
 * does not carry names refuses the statement, one that does runs it there.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type StatementPath = {
  /** Whether named prepared statements may be used on this path. */
  named: boolean;
  /** Why, in words, for the start's log line. */
  reason: string;
  /** A transaction pooler is in the way: LISTEN and session locks cannot pass it (DATABASE_DIRECT_URL). */
  transactionPooler?: boolean;
  /** The probe saw the path drop a name (not only failed to tell in time). */
  dropsNames?: boolean;
  /** Named by the operator's choice (DATABASE_PREPARED_STATEMENTS=true) on a path the start saw drop them: which, and why. */
  refused?: string;
};

/** SQLSTATEs of a name unknown to, or already taken on, the server connection a pooler chose. */
export const STATEMENT_NAME_CODES = new Set(['26000', '42P05']);

/** A probe's statement waits this long at most: a pooler with one server connection would keep B waiting for A's. */
const PROBE_QUERY_MS = 5_000;
const client = (url: string) =>
  new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    query_timeout: PROBE_QUERY_MS,
    application_name: 'shipyard-probe',
  });

const NOT_KEPT: StatementPath = {
  named: false,
  reason:
    'a transaction pooler that does not keep prepared statements (PgBouncer before 1.21, or without max_prepared_statements)',
  transactionPooler: true,
  dropsNames: true,
};

export async function probeStatementPath(url: string): Promise<StatementPath> {
  const [a, b] = [client(url), client(url)];
  a.on('error', () => undefined);
  b.on('error', () => undefined);
  try {
    await Promise.all([a.connect(), b.connect()]);
    const name = `shipyard_probe_${randomBytes(8).toString('hex')}`;
    const pid = async (c: pg.Client, named: boolean) =>
      Number(
        (await c.query(named ? { name, text: 'select pg_backend_pid() as pid' } : 'select pg_backend_pid() as pid'))
          .rows[0].pid,
      );
    let multiplexed = false;
    try {
      // Twice: a pooler that hands server connections out in another order shows it the second time.
      for (let round = 0; round < 2; round++) {
        await a.query('begin');
        await pid(a, false);
        const first = await pid(b, true);
        await a.query('commit');
        if ((await pid(b, true)) !== first) multiplexed = true;
      }
    } catch (err) {
      // Refused for its name on any of B's statements: the pooler does not carry names.
      if (STATEMENT_NAME_CODES.has((err as { code?: string }).code ?? '')) return NOT_KEPT;
      // B kept waiting for A's server connection: a pooler with one to hand out. Naming off is safe.
      if (/Query read timeout/i.test((err as Error).message))
        return {
          ...NOT_KEPT,
          reason: 'a pooler that could not be told apart in time: statements go unnamed, to be safe',
          dropsNames: false,
        };
      throw err;
    }
    return multiplexed
      ? {
          named: true,
          reason: 'a transaction pooler that keeps prepared statements (max_prepared_statements)',
          transactionPooler: true,
        }
      : { named: true, reason: 'one server session per connection (PostgreSQL itself, or a session pooler)' };
  } finally {
    await Promise.allSettled([a.end(), b.end()]);
  }
}
