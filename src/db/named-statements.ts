/**
 * Hot statements as named prepared statements on every connection of the ORM's pool, inside a
 * transaction too. A hot read or write registers its text once, when it is compiled; the pool's
 * connections are `NamingClient`s, which send a registered text under its name, so PostgreSQL
 * parses it once per connection and may keep its plan. Kysely, which runs the ORM's statements
 * and our typed ones, passes a statement to its connection as text and values and has no way to
 * name it: this is where the name is added, through the pool's own `Client` option.
 *
 * Only registered texts are named: a statement built per call (a filtered list, the ORM's own
 * writes) goes unnamed as before, so the names on a connection are bounded by the hot statements
 * in the code.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { STATEMENT_NAME_CODES } from './poolers.js';

const names = new Map<string, string>();

/** Registers `text` as a hot statement and returns its name (the same for the same text). */
export function nameStatement(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `hot_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * A `pg` client class of one pool's own, which sends each registered text, with values, as its
 * named prepared statement, and notes when one of its named statements failed for its name (the
 * sign of a transaction pooler that does not keep them, with DATABASE_PREPARED_STATEMENTS=true:
 * /readyz then says so). One per database (its primary's pool and a replica's share it, as the
 * start's probe judges them together), so a process holding several databases (the tests do)
 * judges each by its own failures.
 */
export function namingClient(): typeof pg.Client {
  let failedAt = Number.NEGATIVE_INFINITY;
  const noteNameFailure = (err: { code?: string }) => {
    if (STATEMENT_NAME_CODES.has(err?.code ?? '')) failedAt = performance.now();
  };
  class NamingClient extends pg.Client {}
  NamingClient.prototype.query = function (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    const name = typeof config === 'string' && Array.isArray(values) ? names.get(config) : undefined;
    // A named statement (one of ours, or a hot read's own) is watched for the pooler's refusal,
    // whether its caller waits on a promise or passes a callback (the pool's own query does).
    const named = name ?? (config as { name?: unknown } | null)?.name;
    const done =
      named && typeof callback === 'function'
        ? (err: { code?: string } | null, res: unknown) => {
            if (err) noteNameFailure(err);
            callback(err, res);
          }
        : callback;
    const result = name
      ? unnamed.call(this, { name, text: config, values }, done)
      : unnamed.call(this, config, values, done);
    if (named && result instanceof Promise) result.then(undefined, noteNameFailure);
    return result;
  } as pg.Client['query'];
  // Refused by the path itself (found at start): failing for good, whatever failed since.
  let refused = false;
  failures.set(NamingClient, (ms) => refused || performance.now() - failedAt < ms);
  refusals.set(NamingClient, () => {
    refused = true;
  });
  return NamingClient;
}
const unnamed = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
const failures = new WeakMap<object, (ms: number) => boolean>();
const refusals = new WeakMap<object, () => void>();

/**
 * The start found that this pool's path does not keep named statements, and they are named anyway
 * (DATABASE_PREPARED_STATEMENTS=true): its statements count as failing from now on, before any
 * request has failed.
 */
export const namesRefusedOnThePath = (client: unknown): void => {
  if (client !== undefined) refusals.get(client as object)?.();
};

/** Whether a named statement of the pool made with this client class failed for its name in the last `ms`. */
export const statementNamesFailedWithin = (client: unknown, ms: number): boolean =>
  (client !== undefined && failures.get(client as object)?.(ms)) ?? false;
