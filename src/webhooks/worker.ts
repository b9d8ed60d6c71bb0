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
import type pg from 'pg';
import { CompiledQuery } from 'kysely';
import { type JobWithMetadata, PgBoss, type WorkOptions } from 'pg-boss';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChangeFeed } from '../db/changes.js';
import type { Logger } from '../kernel/logger.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { WebhookDelivery, WebhookSubscription } from './webhook.entity.js';
import { recordAttempt } from './webhooks.queries.js';
import type { WebhookSettings } from './webhooks.service.js';
import { deliveryAddress, urlFormProblem } from './url-check.js';
import { postEvent, signedHeaders, type AttemptOutcome } from './deliver.js';

const QUEUE = 'webhook-deliveries';
const CHANNEL = 'shipyard_webhooks';
const BATCH = 100;
/** The shortest time between the starts of two relay passes, unless the last one took a full batch. */
const RELAY_GAP_MS = 25;
/** Deliveries tried at once by one process (each subscription's one at a time). */
const WORKERS = 4;

export type RetryPolicy = {
  /** Retries after the first attempt. */
  limit: number;
  /** The first retry's delay; each next one doubles, with jitter, up to maxDelaySeconds. */
  delaySeconds: number;
  maxDelaySeconds: number;
  /** A subscription whose deliveries have all failed for this long is disabled. */
  disableAfterMs: number;
};

/** 20 retries from 30 s doubling to 6 h: the last about 3 days after the first attempt. */
const DEFAULT_RETRY: RetryPolicy = {
  limit: 20,
  delaySeconds: 30,
  maxDelaySeconds: 6 * 3600,
  disableAfterMs: 3 * 24 * 3_600_000,
};

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

export async function startWebhookWorker(opts: WorkerOptions): Promise<WebhookWorker> {
  const retry = { ...DEFAULT_RETRY, ...opts.retry };
  const pollSeconds = opts.pollSeconds ?? 2;
  const pool = (await opts.orm.em.getConnection().getNativeClient()) as pg.Pool;
  const boss = new PgBoss({
    db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
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
  const queue = {
    retryLimit: retry.limit,
    retryDelay: retry.delaySeconds,
    retryBackoff: true,
    retryDelayMax: retry.maxDelaySeconds,
    expireInSeconds: opts.expireSeconds ?? 60,
  };
  if (await boss.getQueue(QUEUE)) await boss.updateQueue(QUEUE, queue);
  else await boss.createQueue(QUEUE, queue);

  // Four workers (pg-boss polls without LISTEN on this connection): a worker that ends a delivery
  // looks for the next one at once, so one subscription's backlog is tried back to back, not one
  // per poll; the relay wakes them all when it queued any (a busy one would not look sooner).
  const workerIds: string[] = [];
  const wakeAll = () => {
    for (const id of workerIds) boss.notifyWorker(id);
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
          try {
            await deliver(opts, retry, job!);
          } finally {
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
      .then(({ queued, full }) => {
        if (queued > 0) wakeAll();
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
 * One pass of the relay: how many deliveries it queued, and whether it took a full batch of
 * events or of unqueued deliveries (then another pass follows at once). The deliveries it makes are
 * queued as they are made (a row-level trigger wakes the relay only for a delivery made
 * unqueued: a ping or a redelivery), and all of a pass's jobs go to pg-boss in one statement.
 */
async function relay(orm: MikroORM, boss: PgBoss): Promise<{ queued: number; full: boolean }> {
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
    return { queued: queued.length, full };
  });
}

/** Text a receiver sent, as a text column can hold it: NUL is the one character PostgreSQL refuses. */
const storable = (text: string | null, max: number): string | null =>
  text === null ? null : text.replaceAll('\0', '\uFFFD').slice(0, max);

/** The body a delivery sends: the event's envelope, its data, and a link to its resource. */
function eventBody(event: WebhookEvent, apiUrl: string): string {
  const { path, ...data } = JSON.parse(event.data) as { path?: string } & Record<string, unknown>;
  return JSON.stringify({
    id: event.id,
    type: event.type,
    occurredAt: event.occurredAt.toISOString(),
    projectId: event.projectId,
    sequence: Number(event.sequence),
    data: path ? { ...data, url: `${apiUrl}${path}` } : data,
  });
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
function signingSecrets(s: WebhookSubscription, settings: WebhookSettings, now: Date): string[] {
  const open = (sealed: string) => {
    try {
      return settings.box.open(sealed);
    } catch {
      throw new Error(
        "its signing secret cannot be read: this server's SECRET_KEY is not the one it was sealed with (every instance must share one)",
      );
    }
  };
  const secrets = [open(s.secret)];
  if (s.previousSecret && s.previousSecretUntil && s.previousSecretUntil > now) secrets.push(open(s.previousSecret));
  return secrets;
}

/**
 * One attempt at one delivery, written to its log. Throws when it should be tried again, so that
 * pg-boss schedules the retry; returns when it is done (delivered, or given up). Whether a retry
 * is left is the job's own count and limit, as pg-boss set them when it was queued: a worker
 * started with another policy (an instance mid-upgrade) does not leave a delivery pending when
 * its job has no retry left. (A crash during the last attempt can; the history sweep settles those.)
 */
async function deliver(
  opts: WorkerOptions,
  retry: RetryPolicy,
  job: JobWithMetadata<{ deliveryId: string }>,
): Promise<void> {
  const em = opts.orm.em.fork();
  const delivery = await em.findOne(WebhookDelivery, job.data.deliveryId, { populate: ['event', 'subscription'] });
  // Gone with its subscription, or settled by an earlier run of this job.
  if (delivery?.state !== 'pending') return;
  const subscription = delivery.subscription;
  if (!subscription.active && !delivery.manual) {
    delivery.state = 'failed';
    await em.flush();
    return;
  }
  const at = new Date();
  const started = performance.now();
  const outcome = await attempt(subscription, eventBody(delivery.event, opts.apiUrl), delivery.event.id, opts, at);
  await recordAttempt(em, delivery.id, {
    at,
    statusCode: outcome.statusCode,
    durationMs: Math.round(performance.now() - started),
    error: storable(outcome.error, 300),
    responseExcerpt: storable(outcome.excerpt, 1024),
    delivered: outcome.ok,
  });
  // A success on a healthy subscription changes nothing; anything else is decided in the database,
  // on an EntityManager of its own, so that this one's copy stays as read.
  const active =
    outcome.ok && !subscription.failingSince
      ? true
      : await settleSubscription(em.fork(), subscription.id, outcome, at, retry, opts.log);
  if (outcome.ok) return;
  if (job.retryCount >= job.retryLimit || (!active && !delivery.manual)) {
    delivery.state = 'failed';
    await em.flush();
    return;
  }
  throw new Error(`delivery ${delivery.id}: ${outcome.error}`);
}

const duration = (ms: number) =>
  ms >= 86_400_000 ? `${Math.round(ms / 86_400_000)} days` : `${Math.round(ms / 1000)} seconds`;

/**
 * The subscription's health after an attempt, decided by the database on its current row (a
 * delivery beside this one may just have succeeded, or its owner turned it on again): a success
 * clears `failingSince`; a failure sets it if unset, and disables the subscription once it is
 * older than the limit. Returns whether the subscription is still active.
 */
async function settleSubscription(
  em: EntityManager,
  id: string,
  outcome: AttemptOutcome,
  at: Date,
  retry: RetryPolicy,
  log: WorkerOptions['log'],
): Promise<boolean> {
  if (outcome.ok) {
    await em.nativeUpdate(WebhookSubscription, { id, failingSince: { $ne: null } }, { failingSince: null });
    return true;
  }
  await em.nativeUpdate(WebhookSubscription, { id, failingSince: null }, { failingSince: at });
  const disabled = await em.nativeUpdate(
    WebhookSubscription,
    { id, active: true, failingSince: { $lte: new Date(at.getTime() - retry.disableAfterMs) } },
    {
      active: false,
      disabledAt: at,
      disabledReason:
        `Every delivery failed for ${duration(retry.disableAfterMs)}; the last one: ${outcome.error}`.slice(0, 300),
    },
  );
  if (disabled) log.info('webhook subscription disabled', { subscriptionId: id });
  const now = await em.findOne(WebhookSubscription, id, { fields: ['active'], refresh: true });
  return now?.active ?? false;
}

async function attempt(
  subscription: WebhookSubscription,
  body: string,
  eventId: string,
  { settings, attemptTimeoutMs }: WorkerOptions,
  now: Date,
): Promise<AttemptOutcome> {
  try {
    const problem = urlFormProblem(subscription.url, settings.urls);
    if (problem) throw new Error(`the URL ${problem}`);
    const url = new URL(subscription.url);
    const address = await deliveryAddress(url, settings.urls);
    return await postEvent(
      url,
      address,
      body,
      signedHeaders(eventId, body, signingSecrets(subscription, settings, now)),
      attemptTimeoutMs,
    );
  } catch (err) {
    return { ok: false, statusCode: null, error: `not sent: ${(err as Error).message}`, excerpt: null };
  }
}
