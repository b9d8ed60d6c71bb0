/**
 * Recording an event: one row in the outbox (webhook_events), written in the same transaction
 * as the change that caused it, so that an event exists exactly when its change committed. The
 * relay (src/webhooks/worker.ts) delivers it from there. Call it inside the change's transaction, after the
 * changed rows are written and locked: the event's sequence then follows the commit order of
 * changes to one resource.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookEventType } from '../../codegen/generated/api/types.gen.js';
import { sql } from 'kysely';
import { reads } from '../db/reads.js';
import { WebhookEvent } from './event.entity.js';

/** Long text in an event is cut to this many characters; the whole of it is at the event's url. */
const EVENT_TEXT_MAX = 1000;

export type RecordedEvent = {
  type: Exclude<WebhookEventType, 'ping'>;
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
 * Adds the events that an active subscription of their project listens for to the outbox in
 * `em`'s unit of work: they are written with the next flush, in the same transaction. An event
 * nobody listens for is not written (a paused subscription receives nothing, so misses nothing
 * it would have had). The question is asked under the project's row lock where the change holds
 * it (the roadmap), which creating a subscription also takes.
 */
export async function recordEvents(em: EntityManager, events: readonly RecordedEvent[]): Promise<void> {
  const heard = new Map<string, Promise<boolean>>();
  for (const event of events) {
    const key = `${event.projectId} ${event.type}`;
    if (!heard.has(key)) heard.set(key, anyoneListens(em, event.projectId, event.type));
    if (!(await heard.get(key))) continue;
    em.create(WebhookEvent, {
      projectId: event.projectId,
      type: event.type,
      data: JSON.stringify({ ...event.data, path: event.path }),
    });
  }
}

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
