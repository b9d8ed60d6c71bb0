/**
 * The webhook worker: a relay from the outbox to the job queue, and the queue's deliveries.
 *
 * Relay: woken by the outbox's notice (pg_notify at commit) and every few seconds besides, it
 * takes undispatched events (FOR UPDATE SKIP LOCKED: any number of instances may relay), adds a
 * delivery for each active subscription that chose the event's type, and hands every delivery
 * not yet queued to pg-boss in the same transaction, as a job whose id is the delivery's id: a
 * second hand-over of the same delivery is a no-op, so a crash between the two loses nothing.
 *
 * Deliveries: pg-boss runs each job on one worker at a time and retries it with exponential
 * back-off and jitter for about 3 days (docs/decisions/0012-webhook-delivery.md). pg-boss runs on
 * the ORM's own connections (the embedded database has just one): its statements go through the
 * ORM's pool, and the hand-over through the relay's transaction.
 */
import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CompiledQuery } from 'kysely';
import { PgBoss, type WorkOptions } from 'pg-boss';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeFeed } from '../db/changes.js';
import { preparesStatements } from '../db/reads.js';
import type { Logger } from '../kernel/logger.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { WebhookDelivery, WebhookSubscription } from './webhook.entity.js';
import type { WebhookSettings } from './webhooks.service.js';
import { DEFAULT_RETRY, deliver, type RetryPolicy, signerCache } from './delivery-job.js';
import { giveUpDelivery } from './webhooks.queries.js';

export type { RetryPolicy };

const QUEUE = 'webhook-deliveries';
/** Where pg-boss copies a delivery's job that ended failed without the delivery being settled. */
const GIVEN_UP = 'webhook-deliveries-given-up';
const CHANNEL = 'shipyard_webhooks';
const BATCH = 100;
/** The shortest time between the starts of two relay passes, unless the last one took a full batch. */
const RELAY_GAP_MS = 25;
/** Deliveries tried at once by one process (each subscription's one at a time). */
const WORKERS = 4;

export type WorkerOptions = {
  orm: MikroORM;
  changes?: ChangeFeed;
  log: Logger;
  settings: WebhookSettings;
  /** The API's public base (PUBLIC_URL/api/v1): each event links to its resource there. */
  apiUrl: string;
  retry?: Partial<RetryPolicy>;
  /** How often the relay looks without being woken, and pg-boss polls (seconds). */
  pollSeconds?: number;
  /** Tests: how long a crashed worker's delivery stays claimed (default 60 s), and how often pg-boss checks (its default 60 s). */
  expireSeconds?: number;
  superviseSeconds?: number;
  /** Tests: one attempt's deadline (default 10 s). */
  attemptTimeoutMs?: number;
};

export type WebhookWorker = { stop: () => Promise<void> };

/** Runs `sql` on the connection of `em`'s transaction: how a job joins it (pg-boss's `db` option). */
const inTransaction = (em: EntityManager) => ({
  executeSql: async (text: string, values?: unknown[]) => ({
    rows: [...(await em.getKysely().executeQuery(CompiledQuery.raw(text, values ?? []))).rows],
  }),
});

/** The most pg-boss statement texts prepared on each connection. */
const PREPARED_MAX = 50;

/**
 * pg-boss's statements on the ORM's pool (pg-boss's `db` option). Each one with values goes as a
 * named prepared statement, so that PostgreSQL plans it once per connection: pg-boss's fetch (a
 * CTE over its job table that keeps one delivery per subscription at a time) took longer to plan
 * than to run, once per delivery. A statement without values goes as it is (its migrations send
 * several statements in one text, which cannot be prepared); so does any text past the first
 * PREPARED_MAX, a bound on what a connection keeps should a text ever vary.
 */
function queueStatements(pool: pg.Pool, prepare: boolean) {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (!name && names.size < PREPARED_MAX) {
      name = `boss_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    executeSql: (text: string, values?: unknown[]) => {
      const name = prepare && values?.length ? nameOf(text) : undefined;
      return name ? pool.query({ name, text, values }) : pool.query(text, values);
    },
  };
}

export async function startWebhookWorker(opts: WorkerOptions): Promise<WebhookWorker> {
  const retry = { ...DEFAULT_RETRY, ...opts.retry };
  const pollSeconds = opts.pollSeconds ?? 2;
  const pool = (await opts.orm.em.getConnection().getNativeClient()) as pg.Pool;
  const boss = new PgBoss({
    db: queueStatements(pool, preparesStatements(opts.orm)),
    schema: 'pgboss',
    schedule: false,
    ...(opts.superviseSeconds
      ? {
          superviseIntervalSeconds: opts.superviseSeconds,
          monitorIntervalSeconds: opts.superviseSeconds,
          maintenanceIntervalSeconds: opts.superviseSeconds,
        }
      : {}),
  });
  const queueError = everyThirtySeconds(opts.log, 'webhook queue');
  boss.on('error', queueError);
  await boss.start();
  // A delivery job settles its delivery itself, except when its last attempt never ended (its
  // worker died) or threw: pg-boss then fails the job and copies it to GIVEN_UP, whose worker
  // marks the delivery failed, instead of leaving it pending.
  if (!(await boss.getQueue(GIVEN_UP))) await boss.createQueue(GIVEN_UP, { retryLimit: 10, retryBackoff: true });
  const queue = {
    retryLimit: retry.limit,
    retryDelay: retry.delaySeconds,
    retryBackoff: true,
    retryDelayMax: retry.maxDelaySeconds,
    expireInSeconds: opts.expireSeconds ?? 60,
    deadLetter: GIVEN_UP,
  };
  if (await boss.getQueue(QUEUE)) await boss.updateQueue(QUEUE, queue);
  else await boss.createQueue(QUEUE, queue);
  await boss.work<{ deliveryId: string }>(
    GIVEN_UP,
    { pollingIntervalSeconds: pollSeconds, batchSize: 20 },
    async (jobs) => {
      for (const job of jobs) await giveUpDelivery(opts.orm.em.fork(), job.data.deliveryId);
    },
  );

  // Four workers (pg-boss polls without LISTEN on this connection): a worker that ends a delivery
  // looks for the next one at once, so one subscription's backlog is tried back to back, not one
  // per poll. The relay wakes one idle worker for each subscription it queued deliveries for that
  // no worker is trying now: one delivery per subscription is tried at a time, so any other
  // worker woken would only ask the queue for nothing.
  const workerIds: string[] = [];
  const signer = signerCache(opts.settings.box);
  /** The subscription whose delivery each worker is trying; null while it is idle. */
  const trying: (string | null)[] = Array(WORKERS).fill(null);
  const wake = (subscriptions: ReadonlySet<string>) => {
    let wanted = [...subscriptions].filter((s) => !trying.includes(s)).length;
    for (let i = 0; i < WORKERS && wanted > 0; i++) {
      const id = workerIds[i];
      if (trying[i] !== null || !id) continue;
      boss.notifyWorker(id);
      wanted--;
    }
  };
  for (let i = 0; i < WORKERS; i++)
    workerIds.push(
      await boss.work<{ deliveryId: string }, unknown, { includeMetadata: true } & WorkOptions>(
        QUEUE,
        {
          pollingIntervalSeconds: Math.max(0.5, pollSeconds / 4),
          batchSize: 1,
          groupConcurrency: 1,
          includeMetadata: true,
        },
        async ([job]) => {
          trying[i] = job!.groupId ?? '';
          try {
            await deliver({ ...opts, retry, signer }, job!);
          } finally {
            trying[i] = null;
            const self = workerIds[i];
            if (self) boss.notifyWorker(self);
          }
        },
      ),
    );

  const relayError = everyThirtySeconds(opts.log, 'webhook relay');
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let waiting: NodeJS.Timeout | undefined;
  let lastStart = 0;
  // A notice that comes while a pass runs asks for one more pass after it, at most one per
  // RELAY_GAP_MS: a quiet roadmap's event is relayed at once, and a busy one's events are taken
  // a few at a time instead of each in a transaction of its own.
  const kick = (now = false) => {
    if (stopped || waiting) return;
    if (running) {
      again = true;
      return;
    }
    // A monotonic clock: a wall clock stepped back would hold the relay (and its poll) that long.
    const wait = now ? 0 : lastStart + RELAY_GAP_MS - performance.now();
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
      .then(({ subscriptions, full }) => {
        wake(subscriptions);
        backlog = full;
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
  const unsubscribe = opts.changes?.subscribe(CHANNEL, { onNotice: () => kick(), onLive: (live) => live && kick() });
  const timer = setInterval(() => kick(), pollSeconds * 1000);
  timer.unref();
  kick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      clearTimeout(waiting);
      unsubscribe?.();
      await running;
      await boss.stop({ graceful: true, timeout: 5_000, close: false });
    },
  };
}

/**
 * Logs an error at most every 30 seconds, with how many like it came meanwhile: while the
 * database is away, each poll of each worker fails, and one line says as much as hundreds.
 */
function everyThirtySeconds(log: WorkerOptions['log'], what: string): (error: unknown) => void {
  let last = 0;
  let since = 0;
  return (error) => {
    since++;
    if (Date.now() - last < 30_000) return;
    log.error(what, { error, failuresSinceLastLine: since });
    last = Date.now();
    since = 0;
  };
}

/**
 * One pass of the relay: the subscriptions it queued deliveries for, and whether it took a full batch of
 * events or of unqueued deliveries (then another pass follows at once). The deliveries it makes are
 * queued as they are made (a row-level trigger wakes the relay only for a delivery made
 * unqueued: a ping or a redelivery), and all of a pass's jobs go to pg-boss in one statement.
 */
async function relay(orm: MikroORM, boss: PgBoss): Promise<{ subscriptions: Set<string>; full: boolean }> {
  return orm.em.fork().transactional(async (tem) => {
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
    for (const event of events) {
      for (const s of subscriptions)
        if (s.project.id === event.projectId && s.events.includes(event.type))
          queued.push(tem.create(WebhookDelivery, { subscription: s, event, enqueuedAt: now }));
      event.dispatchedAt = now;
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
    return { subscriptions: new Set(queued.map((d) => d.subscription.id)), full };
  });
}
