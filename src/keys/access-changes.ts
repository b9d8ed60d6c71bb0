/**
 * Changes to who may use a key, announced by the triggers in src/db/triggers.ts (created by migration
 * ..._access_changes): a key revoked, deleted, or changed in what it opens; an account disabled,
 * enabled or deleted. Each sends `pg_notify('shipyard_access', 'key:<id>' | 'user:<id>')`, which
 * every running instance hears (src/db/changes.ts) and drops from its key cache at once, in
 * whatever process or plain SQL the change was made; a TRUNCATE of either table sends `all`
 * (its trigger is the migration's: the ORM does not introspect TRUNCATE triggers).
 */
export const ACCESS_CHANNEL = 'shipyard_access';

/** What a notification says: which key, or whose keys, to forget. */
export type AccessChange = { kind: 'key' | 'user'; id: string };

export function parseAccessChange(payload: string): AccessChange | undefined {
  const m = /^(key|user):([0-9a-f-]{36})$/.exec(payload);
  return m ? { kind: m[1] as AccessChange['kind'], id: m[2]! } : undefined;
}
