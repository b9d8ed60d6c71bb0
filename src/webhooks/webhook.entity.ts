import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes, madeAt } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { webhookWakeTrigger } from '../db/triggers.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { Project } from '../projects/project.entity.js';

/**
 * A project's webhook subscription: where its events go and which ones. The signing secret is
 * kept encrypted (./secrets.ts); after a rotation the previous one stays valid until
 * `previousSecretUntil`, and both signatures are sent meanwhile.
 */
const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  properties: {
    id: uuidv7Key(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    url: p.string().length(2000),
    events: p.type(TextArrayType),
    active: p.boolean().default(true),
    description: p.string().length(500).default(''),
    secret: p.text(),
    previousSecret: p.text().nullable(),
    previousSecretUntil: p.datetime().nullable(),
    /** When deliveries started failing without a success since (cleared by the next success). */
    failingSince: p.datetime().nullable(),
    /** Set when the server turned it off (failing for too long); cleared when its owner turns it on again. */
    disabledAt: p.datetime().nullable(),
    disabledReason: p.string().length(300).nullable(),
    /** The last `sequence` given to one of its deliveries: they are numbered 1, 2, 3… per subscription. */
    lastSequence: p.bigint('number').default(0),
    ...changeTimes(),
  },
  indexes: [{ name: 'webhook_subscriptions_project_idx', properties: ['project'] }],
});
export class WebhookSubscription extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscription);

const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

/** One event for one subscription, tried until it is delivered or gives up. */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: uuidv7Key(),
    subscription: () => p.manyToOne(WebhookSubscription).deleteRule('cascade'),
    event: () => p.manyToOne(WebhookEvent).deleteRule('cascade'),
    /**
     * Its place among the subscription's events: 1, 2, 3…, gap-free for the receiver, in the order
     * the changes were committed for any one resource. A redelivery keeps its event's number.
     */
    sequence: p.bigint('number'),
    state: p.enum(DELIVERY_STATES).default('pending'),
    /** Asked for by the subscription's owner (a redelivery or a ping), not made by a change. */
    manual: p.boolean().default(false),
    attempts: p.integer().default(0),
    createdAt: madeAt(),
    lastAttemptAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    /** When the relay handed it to the job queue; null until then (./worker.ts). */
    enqueuedAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'webhook_deliveries_subscription_idx', properties: ['subscription', 'createdAt'] },
    {
      name: 'webhook_deliveries_unqueued_idx',
      expression:
        'create index "webhook_deliveries_unqueued_idx" on "webhook_deliveries" ("created_at") where "enqueued_at" is null',
    },
  ],
  triggers: [webhookWakeTrigger('webhook_deliveries')],
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);

/** One try of a delivery: when, what came back, how long it took, the first bytes of the answer. */
const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: uuidv7Key(),
    delivery: () => p.manyToOne(WebhookDelivery).deleteRule('cascade'),
    at: p.datetime(),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    /** Why it failed, when no answer came back (a timeout, a refused address). */
    error: p.string().length(300).nullable(),
    responseExcerpt: p.string().length(1024).nullable(),
  },
  indexes: [{ name: 'webhook_attempts_delivery_idx', properties: ['delivery', 'at'] }],
});
export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
