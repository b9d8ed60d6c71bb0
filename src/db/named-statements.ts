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

/** A `pg` client that sends each registered text, with values, as its named prepared statement. */
export class NamingClient extends pg.Client {}
const unnamed = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
NamingClient.prototype.query = function (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
  const name = typeof config === 'string' && Array.isArray(values) ? names.get(config) : undefined;
  return name
    ? unnamed.call(this, { name, text: config, values }, callback)
    : unnamed.call(this, config, values, callback);
} as pg.Client['query'];
