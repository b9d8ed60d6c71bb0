import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key } from '../db/columns.js';
import { webhookWakeTrigger } from '../db/triggers.js';

/**
 * The outbox: one row per change that a subscription listens for, written in the change's own
 * transaction. `sequence` comes
 * from the database in commit order for one resource (its writers hold its row lock or its
 * project's), so a receiver can drop an update older than one it already has. The relay
 * (src/webhooks/worker.ts) turns each into one delivery per matching subscription.
 */
const WebhookEventSchema = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  properties: {
    id: uuidv7Key(),
    sequence: p.bigint('number').autoincrement().unique(),
    projectId: p.uuid(),
    type: p.string().length(40),
    /** The event's `data` as JSON text (kept as written, in the presenter's order), long text shortened. */
    data: p.text(),
    occurredAt: p.datetime().onCreate(() => new Date()),
    dispatchedAt: p.datetime().nullable(),
    /** The trace of the change that caused it (a W3C traceparent), continued by its deliveries; null when untraced. */
    traceParent: p.string().length(55).nullable(),
  },
  indexes: [
    { name: 'webhook_events_occurred_at_idx', properties: ['occurredAt'] },
    {
      name: 'webhook_events_pending_idx',
      expression:
        'create index "webhook_events_pending_idx" on "webhook_events" ("sequence") where "dispatched_at" is null',
    },
  ],
  triggers: [webhookWakeTrigger('webhook_events')],
});
export class WebhookEvent extends WebhookEventSchema.class {}
WebhookEventSchema.setClass(WebhookEvent);
