/**
 * The triggers the entities declare, so that the schema diff knows they are meant to be there.
 * Their functions are written by migrations. They live under db/ because every area's entity
 * declares some of them, and db/ is below the areas.
 */
import type { TriggerDef } from '@mikro-orm/core';

/**
 * The triggers that announce a change to who may use a key (created by migration
 * ..._access_changes): a key revoked, deleted, or changed in what it opens; an account disabled,
 * enabled or deleted. Each sends `pg_notify('shipyard_access', 'key:<id>' | 'user:<id>')`, which
 * every running instance hears (src/db/changes.ts) and drops from its key cache at once, in
 * whatever process or plain SQL the change was made; a TRUNCATE of either table sends `all`
 * (its trigger is the migration's: the ORM does not introspect TRUNCATE triggers).
 */
export function accessChangedTrigger(table: 'api_keys' | 'users', columns: string): TriggerDef {
  return {
    name: `${table}_access_changed`,
    timing: 'after',
    events: ['update', 'delete'],
    forEach: 'row',
    expression: `create trigger "${table}_access_changed" after delete or update of ${columns} on "${table}"
        for each row execute function "shipyard_access_changed"()`,
  };
}

/**
 * The trigger each searchable table carries (created by migration ..._search_changes): any
 * statement that inserts, deletes, or updates one of `columns` takes the next value of the
 * `search_changes` counter, which the search cache reads (src/search/search-cache.ts). TRUNCATE
 * has its own trigger in the migration, which the ORM does not introspect.
 */
export function searchChangedTrigger(table: string, columns: string): TriggerDef {
  return {
    name: `${table}_search_changed`,
    timing: 'after',
    events: ['insert', 'update', 'delete'],
    forEach: 'statement',
    expression: `create trigger "${table}_search_changed" after insert or delete or update of ${columns} on "${table}"
        for each statement execute function "shipyard_search_changed"()`,
  };
}

/**
 * The trigger that tells the idempotency records a resource they made was deleted, however it
 * went (a delete, a cascade, plain SQL): a retry with its key is then a 409, never a replay of
 * something that is gone. The function is written by a migration (..._idempotency_account);
 * each table that a create makes a row in declares the trigger, so the schema stays as the
 * entities say.
 */
export function resourceGoneTrigger(table: string): TriggerDef {
  return {
    name: `${table}_idempotency_gone`,
    timing: 'after',
    events: ['delete'],
    forEach: 'row',
    expression: `create trigger "${table}_idempotency_gone" after delete on "${table}" for each row execute function shipyard_idempotency_gone()`,
  };
}

/**
 * The triggers that wake the webhook relay (src/webhooks/worker.ts): each event written to the
 * outbox (webhook_events), and each delivery added unqueued (a ping, a redelivery: the relay's
 * own are queued as they are made), send `pg_notify('shipyard_webhooks', '')`, delivered at
 * commit (once however many rows asked) to every instance that runs a worker. Row triggers: the
 * outbox's insert asks whether anyone listens as it writes, and one that wrote no row wakes
 * nobody. The function is written by migration ..._webhooks.
 */
export function webhookWakeTrigger(table: 'webhook_events' | 'webhook_deliveries'): TriggerDef {
  const when = table === 'webhook_deliveries' ? 'new.enqueued_at is null' : undefined;
  return {
    name: `${table}_wake_relay`,
    timing: 'after',
    events: ['insert'],
    forEach: 'row',
    ...(when ? { when } : {}),
    expression: `create trigger "${table}_wake_relay" after insert on "${table}" for each row${when ? ` when (${when})` : ''} execute function shipyard_webhook_recorded()`,
  };
}
