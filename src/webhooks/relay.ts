/**
 * The relay: from the outbox to the job queue. Woken by the outbox's notice (pg_notify at commit)
 * and every few seconds besides, a pass takes undispatched events (one pass at a time on the
 * database, whichever instance runs it: tryHoldRelay), adds a delivery for each active subscription
 * that chose the event's type, numbered in the subscription's own sequence, and hands every delivery not yet queued to pg-boss in the same transaction, as a
 * job whose id is the delivery's id: a second hand-over of the same delivery is a no-op, so a
 * crash between the two loses nothing.
 */
import { type EntityManager, LockMode, type MikroORM } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import type { PgBoss } from 'pg-boss';
import { everyThirtySeconds, type Logger } from '../kernel/logger.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { WebhookDelivery, WebhookSubscription } from './webhook.entity.js';
import { takeSequences, tryHoldRelay } from './webhooks.queries.js';

/** The delivery queue's name in pg-boss. */
export const QUEUE = 'webhook-deliveries';
/** The outbox's notice (its row trigger's pg_notify). */
export const CHANNEL = 'shipyard_webhooks';
const BATCH = 100;
/** The shortest time between the starts of two relay passes, unless the last one took a full batch. */
const RELAY_GAP_MS = 25;
/** The same while events come faster than one a pass: each pass then takes more of them at once. */
const BUSY_RELAY_GAP_MS = 100;

/** Runs `sql` on the connection of `em`'s transaction: how a job joins it (pg-boss's `db` option). */
const inTransaction = (em: EntityManager) => ({
  executeSql: async (text: string, values?: unknown[]) => ({
    rows: [...(await em.getKysely().executeQuery(CompiledQuery.raw(text, values ?? []))).rows],
  }),
});

/**
 * The relay's passes, one at a time: `kick` asks for one. A kick that comes while a pass runs
 * asks for one more pass after it, at most one per RELAY_GAP_MS: a quiet roadmap's event is
 * relayed at once, and a busy one's events are taken a few at a time instead of each in a
 * transaction of its own. While passes find more than one event each (writers committing one
 * after another, as a project's queued writers do), the gap is BUSY_RELAY_GAP_MS, so each pass
 * takes more of them. A pass that took a full batch is followed by another at once.
 */
export function relayPasses(
  opts: { orm: MikroORM; log: Logger },
  boss: PgBoss,
  wake: (subscriptions: ReadonlySet<string>) => void,
): { kick: () => void; stop: () => Promise<void> } {
  const relayError = everyThirtySeconds(opts.log, 'webhook relay');
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let waiting: NodeJS.Timeout | undefined;
  let lastStart = 0;
  let gap = RELAY_GAP_MS;
  const kick = (now = false) => {
    if (stopped || waiting) return;
    if (running) {
      again = true;
      return;
    }
    // A monotonic clock: a wall clock stepped back would hold the relay (and its poll) that long.
    const wait = now ? 0 : lastStart + gap - performance.now();
    if (wait > 0) {
      waiting = setTimeout(() => {
        waiting = undefined;
        kick(true);
      }, wait);
      return;
    }
    lastStart = performance.now();
    let backlog = false;
    running = relay(opts.orm, boss)
      .then(({ subscriptions, full, taken, events }) => {
        wake(subscriptions);
        backlog = full;
        gap = events > 1 ? BUSY_RELAY_GAP_MS : RELAY_GAP_MS;
        // Another instance is relaying: look again after the gap, for what came after its pass began.
        if (!taken) again = true;
      })
      .catch(relayError)
      .finally(() => {
        running = undefined;
        if (again || backlog) {
          again = false;
          kick(backlog);
        }
      });
  };
  return {
    kick: () => kick(),
    stop: async () => {
      stopped = true;
      clearTimeout(waiting);
      await running;
    },
  };
}

/**
 * One pass of the relay: the subscriptions it queued deliveries for, and whether it took a full batch of
 * events or of unqueued deliveries (then another pass follows at once). The deliveries it makes are
 * queued as they are made (a row-level trigger wakes the relay only for a delivery made
 * unqueued: a ping or a redelivery), and all of a pass's jobs go to pg-boss in one statement.
 */
async function relay(
  orm: MikroORM,
  boss: PgBoss,
): Promise<{ subscriptions: Set<string>; full: boolean; taken: boolean; events: number }> {
  return orm.em.fork().transactional(async (tem) => {
    if (!(await tryHoldRelay(tem))) return { subscriptions: new Set<string>(), full: false, taken: false, events: 0 };
    const now = new Date();
    const events = await tem.find(
      WebhookEvent,
      { dispatchedAt: null },
      { orderBy: { sequence: 'asc' }, limit: BATCH, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    const subscriptions = events.length
      ? await tem.find(WebhookSubscription, {
          project: { $in: [...new Set(events.map((e) => e.projectId))] },
          active: true,
        })
      : [];
    const queued = await tem.find(
      WebhookDelivery,
      { enqueuedAt: null },
      { orderBy: { createdAt: 'asc' }, limit: BATCH, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    const full = events.length >= BATCH || queued.length >= BATCH;
    for (const d of queued) d.enqueuedAt = now;
    // Each subscription's new deliveries, in the order of their events: numbered 1, 2, 3… per subscription.
    const made = new Map<WebhookSubscription, WebhookEvent[]>();
    for (const event of events) {
      for (const s of subscriptions)
        if (s.project.id === event.projectId && s.events.includes(event.type))
          made.set(s, [...(made.get(s) ?? []), event]);
      event.dispatchedAt = now;
    }
    for (const [subscription, its] of made) {
      const first = await takeSequences(tem, subscription.id, its.length);
      for (const [i, event] of its.entries())
        queued.push(tem.create(WebhookDelivery, { subscription, event, sequence: first + i, enqueuedAt: now }));
    }
    if (queued.length)
      // One group per subscription: at most one of its deliveries is tried at a time, anywhere, so
      // one subscription's backlog neither floods its receiver nor holds up everyone else's.
      await boss.insert(
        QUEUE,
        queued.map((d) => ({ id: d.id, data: { deliveryId: d.id }, group: { id: d.subscription.id } })),
        { db: inTransaction(tem) },
      );
    await tem.flush();
    return {
      subscriptions: new Set(queued.map((d) => d.subscription.id)),
      full,
      taken: true,
      events: events.length,
    };
  });
}
