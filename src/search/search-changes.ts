/**
 * The trigger each searchable table carries (created by migration ..._search_changes): any
 * statement that inserts, deletes, or updates one of `columns` takes the next value of the
 * `search_changes` counter, which the search cache reads (src/search/search-cache.ts). Declared
 * on the entities so that the schema diff knows the triggers are meant to be there; TRUNCATE
 * has its own trigger in the migration, which the ORM does not introspect.
 */
import type { TriggerDef } from '@mikro-orm/core';

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
