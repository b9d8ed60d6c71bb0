/**
 * The trigger that tells the idempotency records a resource they made was deleted, however it
 * went (a delete, a cascade, plain SQL): a retry with its key is then a 409, never a replay of
 * something that is gone. The function is written by a migration (..._idempotency_account);
 * each table that a create makes a row in declares the trigger, so the schema stays as the
 * entities say.
 */
import type { TriggerDef } from '@mikro-orm/core';

export function resourceGoneTrigger(table: string): TriggerDef {
  return {
    name: `${table}_idempotency_gone`,
    timing: 'after',
    events: ['delete'],
    forEach: 'row',
    expression: `create trigger "${table}_idempotency_gone" after delete on "${table}" for each row execute function shipyard_idempotency_gone()`,
  };
}
