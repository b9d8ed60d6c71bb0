/**
 * Recording an event: one row in the outbox (webhook_events), written in the same transaction
 * as the change that caused it, so that an event exists exactly when its change committed. The
 * relay (src/webhooks/worker.ts) delivers it from there. Call it inside the change's transaction, after the
 * changed rows are written and locked: the event's sequence then follows the commit order of
 * changes to one resource.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KnownWebhookEventType } from '../../codegen/generated/api/types.gen.js';
import { sql } from 'kysely';
import { hotWrite, reads } from '../db/reads.js';
import { uuidv7 } from 'uuidv7';
import { traceParent } from '../telemetry/telemetry.js';

/** Long text in an event is cut to this many characters; the whole of it is at the event's url. */
const EVENT_TEXT_MAX = 1000;

export type RecordedEvent = {
  type: Exclude<KnownWebhookEventType, 'ping'>;
  projectId: string;
  /** The resource's path under the API's base (`/projects/…`): the event's `url` links to it. */
  path: string;
  /** The resource under its name (`milestone`, `buildLog`, `project`, `member`) and any details. */
  data: Record<string, unknown>;
};

/**
 * The event's data with the long text fields of its resource (`resource[fields]`) shortened,
 * and `truncated` naming those that were.
 */
export function shortened<T extends Record<string, unknown>>(
  resource: T,
  fields: readonly (keyof T & string)[],
): { resource: T; truncated: string[] } {
  const truncated: string[] = [];
  const copy: Record<string, unknown> = { ...resource };
  for (const field of fields) {
    const value = copy[field];
    if (typeof value === 'string' && value.length > EVENT_TEXT_MAX) {
      // Whole code points: never half of a surrogate pair.
      copy[field] = Array.from(value).slice(0, EVENT_TEXT_MAX).join('');
      truncated.push(field);
    }
  }
  return { resource: copy as T, truncated };
}

/**
 * Writes the events that an active subscription of their project listens for to the outbox,
 * now, on `em`'s transaction, in one statement that asks and writes at once: a change nobody
 * listens to pays that one statement and nothing more, and a heard one pays no more round trips
 * than an unheard one (the roadmap's writers ask it under the project's row lock, which creating
 * a subscription also takes). A paused subscription receives nothing, so misses nothing it would
 * have had. Sequences are taken in the order of `events`.
 */
export async function recordEvents(em: EntityManager, events: readonly RecordedEvent[]): Promise<void> {
  if (!events.length) return;
  // On its own, the event would commit before its change, or without it.
  if (!em.isInTransaction()) throw new Error("recordEvents runs in the change's transaction");
  // The rows go as one JSON parameter; their names are none of an entity's properties, which the
  // ORM's plugin would rewrite as column names.
  const rows = events.map((event, ord) => ({
    ord,
    event_id: uuidv7(),
    project_ref: event.projectId,
    event_type: event.type,
    payload: JSON.stringify({ ...event.data, path: event.path }),
  }));
  await insertHeardEvents(em, { rows: JSON.stringify(rows), occurredAt: new Date(), traceParent: traceParent() });
}

/** The statement of recordEvents: the rows (JSON) whose project has an active subscription to their type, in order. */
const insertHeardEvents = hotWrite(
  ['rows', 'occurredAt', 'traceParent'],
  (db, v: { rows: string; occurredAt: Date; traceParent: string | null }) =>
    db
      .insertInto('WebhookEvent')
      .columns(['id', 'projectId', 'type', 'data', 'occurredAt', 'traceParent'])
      .expression((eb) =>
        eb
          .selectFrom(
            sql<RecordsetRow>`jsonb_to_recordset(${v.rows}::jsonb)`.as<'v'>(
              sql`v(ord int, event_id uuid, project_ref uuid, event_type text, payload text)`,
            ),
          )
          .select([
            'v.event_id',
            'v.project_ref',
            'v.event_type',
            'v.payload',
            sql<Date>`${v.occurredAt}::timestamptz`.as('occurredAt'),
            sql<string | null>`${v.traceParent}::text`.as('traceParent'),
          ])
          .where((w) =>
            w.exists(
              w
                .selectFrom('WebhookSubscription as s')
                .select('s.id')
                .whereRef('s.project', '=', 'v.project_ref')
                .where('s.active', '=', true)
                .where((s) => sql<boolean>`${s.ref('v.event_type')} = any(${s.ref('s.events')})`),
            ),
          )
          .orderBy('v.ord'),
      ),
);
type RecordsetRow = { ord: number; event_id: string; project_ref: string; event_type: string; payload: string };

/** Whether an active subscription of the project chose `type`. */
export async function anyoneListens(
  em: EntityManager,
  projectId: string,
  type: RecordedEvent['type'],
): Promise<boolean> {
  const rows = await reads(em)
    .selectFrom('WebhookSubscription')
    .select('id')
    .where('project', '=', projectId)
    .where('active', '=', true)
    .where(sql<boolean>`${type} = any(${sql.ref('events')})`)
    .limit(1)
    .execute();
  return rows.length > 0;
}
