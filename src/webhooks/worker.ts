/**
 * The webhook worker: the relay from the outbox to the job queue (./relay.ts), and the queue's
 * deliveries (./delivery-job.ts).
 *
 * Deliveries: pg-boss runs each job on one worker at a time and retries it with exponential
 * back-off and jitter for about 3 days (docs/decisions/0012-webhook-delivery.md). pg-boss runs on
 * the ORM's own connections (the embedded database has just one): its statements go through the
 * ORM's pool, and the hand-over through the relay's transaction.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { PgBoss, type WorkOptions } from 'pg-boss';
import type { ChangeFeed } from '../db/changes.js';
import { nameStatement } from '../db/named-statements.js';
import { everyThirtySeconds, type Logger } from '../kernel/logger.js';
import type { WebhookSettings } from './webhooks.service.js';
import { CHANNEL, QUEUE, relayPasses } from './relay.js';
import { DEFAULT_RETRY, type DeliveryContext, deliver, type RetryPolicy, signerCache } from './delivery-job.js';
import { giveUpDelivery, pendingDeliveries } from './webhooks.queries.js';

export type { RetryPolicy };

/** Where pg-boss copies a delivery's job that ended failed without the delivery being settled. */
const GIVEN_UP = 'webhook-deliveries-given-up';
/** While the outbox's notices are heard, the relay looks on its own once every this many polls. */
const RELAY_POLLS_WHILE_LIVE = 5;
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

/** The most pg-boss statement texts prepared on each connection. */
const PREPARED_MAX = 50;

/**
 * pg-boss's statements on the ORM's pool (pg-boss's `db` option). Each one with values is
 * registered as a hot statement, which the pool's connections send as a named prepared statement
 * (src/db/named-statements.ts), so that PostgreSQL plans it once per connection: pg-boss's fetch
 * (a CTE over its job table that keeps one delivery per subscription at a time) took longer to
 * plan than to run, once per delivery. A statement without values goes as it is (its migrations
 * send several statements in one text, which cannot be prepared); so does any text past the
 * first PREPARED_MAX, a bound on what a connection keeps should a text ever vary.
 */
function queueStatements(pool: pg.Pool) {
  const registered = new Set<string>();
  return {
    executeSql: (text: string, values?: unknown[]) => {
      if (values?.length && !registered.has(text) && registered.size < PREPARED_MAX) {
        registered.add(text);
        nameStatement(text);
      }
      return pool.query(text, values);
    },
  };
}

export async function startWebhookWorker(opts: WorkerOptions): Promise<WebhookWorker> {
  const retry = { ...DEFAULT_RETRY, ...opts.retry };
  const pollSeconds = opts.pollSeconds ?? 2;
  const boss = await openQueue(opts, retry, pollSeconds);
  const wake = await startDeliveries(
    boss,
    { ...opts, retry, signer: signerCache(opts.settings.box), catchUp: catchUp(opts, boss) },
    pollSeconds,
  );
  const relays = relayPasses(opts, boss, wake);
  let live = false;
  const unsubscribe = opts.changes?.subscribe(CHANNEL, {
    onNotice: () => relays.kick(),
    onLive: (now) => {
      live = now;
      if (now) relays.kick();
    },
  });
  // The outbox's notices wake the relay; the poll is for what they miss. While they are heard it
  // looks every RELAY_POLLS_WHILE_LIVE polls (an idle instance's most frequent transaction, else).
  let tick = 0;
  const timer = setInterval(() => {
    if (!live || ++tick % RELAY_POLLS_WHILE_LIVE === 0) relays.kick();
  }, pollSeconds * 1000);
  timer.unref();
  relays.kick();
  return {
    stop: async () => {
      clearInterval(timer);
      unsubscribe?.();
      await relays.stop();
      await boss.stop({ graceful: true, timeout: 5_000, close: false });
    },
  };
}

/** The most waiting deliveries one catch-up moves forward; the rest keep their own back-off. */
const CATCH_UP_MAX = 1000;

/**
 * Moves a subscription's waiting deliveries to now, oldest number first, through pg-boss's own
 * update (it edits jobs not yet active, those waiting for a retry among them): its one worker at
 * a time then sends them back to back, in that order.
 */
const catchUp =
  (opts: WorkerOptions, boss: PgBoss) =>
  async (subscriptionId: string, except: string): Promise<void> => {
    const waiting = await pendingDeliveries(opts.orm.em.fork(), subscriptionId, except, CATCH_UP_MAX);
    const now = new Date();
    for (const id of waiting) await boss.update(QUEUE, undefined, { id, startAfter: now });
  };

/** pg-boss on the ORM's pool, started, with the delivery queue and its dead letter set up and worked. */
async function openQueue(opts: WorkerOptions, retry: RetryPolicy, pollSeconds: number): Promise<PgBoss> {
  const pool = (await opts.orm.em.getConnection().getNativeClient()) as pg.Pool;
  const boss = new PgBoss({
    db: queueStatements(pool),
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
  boss.on('error', everyThirtySeconds(opts.log, 'webhook queue'));
  await boss.start();
  // A delivery job settles its delivery itself, except when its last attempt never ended (its
  // worker died) or threw: pg-boss then fails the job and copies it to GIVEN_UP, whose worker
  // marks the delivery failed, instead of leaving it pending. (It must exist before a queue names it.)
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
  return boss;
}

/**
 * Four delivery workers (pg-boss polls without LISTEN on this connection): a worker that ends a
 * delivery looks for the next one at once, so one subscription's backlog is tried back to back,
 * not one per poll. Returns how the relay wakes them: one idle worker for each subscription it
 * queued deliveries for that no worker is trying now (one delivery per subscription is tried at
 * a time, so any other worker woken would only ask the queue for nothing).
 */
async function startDeliveries(
  boss: PgBoss,
  ctx: DeliveryContext,
  pollSeconds: number,
): Promise<(subscriptions: ReadonlySet<string>) => void> {
  const workerIds: string[] = [];
  /** The subscription whose delivery each worker is trying; null while it is idle. */
  const trying: (string | null)[] = Array(WORKERS).fill(null);
  for (let i = 0; i < WORKERS; i++)
    workerIds.push(
      await boss.work<{ deliveryId: string }, unknown, { includeMetadata: true } & WorkOptions>(
        QUEUE,
        {
          // New deliveries wake a worker (the relay's notifyWorker), and a worker that ends one
          // asks for the next at once: the poll only finds retries come due, which can wait a poll.
          pollingIntervalSeconds: pollSeconds,
          batchSize: 1,
          groupConcurrency: 1,
          includeMetadata: true,
        },
        async ([job]) => {
          trying[i] = job!.groupId ?? '';
          try {
            await deliver(ctx, job!);
          } finally {
            trying[i] = null;
            const self = workerIds[i];
            if (self) boss.notifyWorker(self);
          }
        },
      ),
    );
  return (subscriptions) => {
    let wanted = [...subscriptions].filter((s) => !trying.includes(s)).length;
    for (let i = 0; i < WORKERS && wanted > 0; i++) {
      const id = workerIds[i];
      if (trying[i] !== null || !id) continue;
      boss.notifyWorker(id);
      wanted--;
    }
  };
}
