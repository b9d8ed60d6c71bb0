/**
 * config → database → app → listen; graceful shutdown: on SIGTERM/SIGINT/SIGHUP, or when its
 * launcher ends, stop accepting, let in-flight requests finish, close the database, exit 0.
 */
import type { Server } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { databaseSettings, loadConfig, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { createApp } from './app.js';
import { createLogger, flushLogs } from './http/log.js';
import type { Logger } from './kernel/logger.js';
import { connectRedis, type Counters } from './budgets/counters.js';
import { httpServer } from './http/client-errors.js';
import { GithubClient } from './github/github.client.js';
import { scheduleGithubSync } from './github/github.sync.js';
import { loadImageDecoder, sweepUnattachedMedia } from './media/media.service.js';
import { sweepIdempotencyRecords } from './idempotency/idempotency.service.js';
import { sweepOAuth } from './oauth/oauth.service.js';
import { LocalDiskStorage } from './media/storage.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { startPasswordThread } from './users/password-thread.js';
import { loadSecretKey, SecretBox } from './webhooks/secrets.js';
import { startWebhookWorker, type WebhookWorker } from './webhooks/worker.js';
import { sweepWebhookHistory, type WebhookSettings } from './webhooks/webhooks.service.js';
import { sweepSecurityLog } from './security-log/security-log.service.js';
import type { KeyUse } from './keys/key-use.js';
import { stopTelemetry, telemetryStarted } from './telemetry/stop.js';
import { observeRequests } from './telemetry/requests.js';

/** The argument with which bin/shipyard.mjs says it holds a channel to the server (see launcherEnded). */
const LAUNCHER_CHANNEL_ARG = '--launcher-channel';

/**
 * "migrating 3 of 31" as the migrations run: the first, the last, and one at most every second
 * between them, so that a first start says where it is without a line per migration.
 */
function sayMigrating(log: Logger) {
  let saidAt = 0;
  return (n: number, of: number, name: string) => {
    if (n !== 1 && n !== of && Date.now() - saidAt < 1000) return;
    saidAt = Date.now();
    log.info(`migrating ${n} of ${of}`, { migration: name });
  };
}

export async function serve(config: Config = loadConfig(), opts: { launcherChannel?: boolean } = {}): Promise<Server> {
  // Watched from the start: a launcher may end while the server is still starting.
  const launcherGone = opts.launcherChannel ? launcherEnded() : undefined;
  const log = createLogger(config.logLevel);
  // Loaded before the first request, not with it: a missing library stops the start here, and
  // the first upload or sign-up does not wait. The password policy loads on its own thread
  // meanwhile (a CLI command loads them only to use them).
  const passwords = startPasswordThread({
    onEnded: (error) => log.error('the password check thread ended', { error }),
  });
  const migrating = config.migrateOnStart ? ' and applying migrations' : ' (MIGRATE_ON_START=false: no migrations)';
  log.info(
    config.databaseUrl
      ? `opening PostgreSQL${migrating}`
      : `opening the embedded database${migrating}${config.migrateOnStart ? ' (a first start takes longest)' : ''}`,
  );
  const opening = openDatabase({
    ...databaseSettings(config),
    command: 'shipyard serve',
    migrate: config.migrateOnStart,
    refusePending: true,
    onMigrating: sayMigrating(log),
  });
  const [db] = await Promise.all([opening, loadImageDecoder(), passwords.ready]).catch(async (err) => {
    // Whatever did start is put away again: the database's directory lock above all.
    await Promise.allSettled([passwords.stop(), opening.then((opened) => opened.close())]);
    throw err;
  });
  if (db.applied.length) log.info('migrations applied', { migrations: db.applied });
  log.info(db.statements.named ? 'hot statements go named (prepared)' : 'hot statements go unnamed', {
    why: db.statements.reason,
  });
  if (db.statements.refused)
    log.error(
      `DATABASE_PREPARED_STATEMENTS=true, but the start saw the path drop a statement's name (${db.statements.refused}): named statements will fail there, and /readyz answers 503 statements-fail. Leave it unset (auto) or set it to false.`,
    );
  if (db.statements.transactionPooler && !config.databaseDirectUrl)
    log.error(
      'DATABASE_URL goes through a transaction pooler, which LISTEN cannot pass: set DATABASE_DIRECT_URL to a direct connection (until then the key cache trusts nothing and the webhook relay only polls)',
    );
  const redis = config.redis ? connectRedis(config.redis, log) : undefined;
  const webhooks = webhookSettings(config);
  const app = createApp({
    orm: db.orm,
    config,
    log,
    redis,
    changes: db.changes,
    checkPassword: passwords.check,
    webhooks,
    warmValidators: true,
  });
  const observed = telemetryStarted();
  const server = httpServer(observed ? observeRequests(app, observed) : app).listen(config.port, config.host);
  // No request may hold a connection for ever: headers within 20 s, the whole request within 60 s.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch(async (err) => {
    await Promise.all([db.close(), passwords.stop()]);
    throw err;
  });
  // Settled long before (a port is listened on at once): whether the metrics are served, for the line below.
  const metricsServed = (await telemetryStarted()?.metricsListening) ?? true;
  announce(config, log, db, redis !== undefined, metricsServed);
  // Started beside serving, not before it: a stop signal meanwhile is handled (below), and waits for it.
  const worker = config.webhookWorker
    ? runWebhookWorker(config, db, log, webhooks).catch((error) => {
        log.error('the webhook worker did not start; events wait in the outbox', { error });
        return undefined;
      })
    : undefined;
  // Once the start has said everything else, so that it is the last thing on the screen.
  // Not once a stop has begun (Ctrl-C while the worker was starting): then the greeting would lie.
  if (process.stdout.isTTY)
    void Promise.resolve(worker).then(() => {
      if (server.listening) process.stdout.write(greeting(config.publicUrl));
    });
  const stopSync =
    config.githubSyncIntervalMinutes > 0
      ? scheduleGithubSync(
          db.orm,
          new GithubClient({ baseUrl: config.githubApiUrl, token: config.githubToken }),
          config.githubSyncIntervalMinutes,
          log,
        )
      : () => undefined;
  let workerStopped: Promise<void> | undefined;
  const storage = new LocalDiskStorage(config.mediaDir);
  const stopSweep = sweepHourly(db.orm, log, {
    'unattached uploads removed': (em) =>
      config.mediaUnattachedHours > 0
        ? sweepUnattachedMedia(em, storage, new Date(Date.now() - config.mediaUnattachedHours * 3_600_000))
        : Promise.resolve(0),
    'idempotency records expired': (em) => sweepIdempotencyRecords(em),
    'OAuth grants and unused client registrations removed': (em) => sweepOAuth(em),
    'webhook deliveries stranded marked failed, and events older than 30 days removed': (em) => sweepWebhookHistory(em),
    [`security log: expiries recorded, entries older than ${config.securityLogDays} days removed`]: (em) =>
      sweepSecurityLog(em, config.securityLogDays),
  });
  stopGracefully(server, log, {
    launcherGone,
    stopWork: () => {
      stopSync();
      stopSweep();
      // Deliveries in flight end (5 s at most) while the requests in flight finish.
      workerStopped = worker?.then((w) => w?.stop());
    },
    release: async () => {
      await workerStopped;
      // What the keys' use noted since its last write, before the database goes.
      await (app.locals.keyUse as KeyUse).close();
      (app.locals.counters as Counters).close();
      redis?.close();
      await Promise.all([db.close(), passwords.stop()]);
      await stopTelemetry();
    },
  });
  return server;
}

/** How webhook secrets are sealed (SECRET_KEY, or the key kept in DATA_DIR) and where webhooks may go. */
export function webhookSettings(config: Config): WebhookSettings {
  return {
    box: new SecretBox(loadSecretKey(config.secretKey, config.dataDir)),
    urls: { allowLocal: config.webhookAllowLocalUrls },
  };
}

/** The webhook worker on this database (`shipyard serve` by default, or `shipyard worker` alone). */
export async function runWebhookWorker(
  config: Config,
  db: Database,
  log: Logger,
  settings: WebhookSettings,
): Promise<WebhookWorker> {
  const worker = await startWebhookWorker({
    orm: db.orm,
    changes: db.changes,
    log,
    settings,
    apiUrl: `${config.publicUrl}/api/v1`,
  });
  log.info('webhook worker started', { localUrlsAllowed: config.webhookAllowLocalUrls });
  return worker;
}

/** The JSON line that says where everything is; a person at a terminal also gets one plain sentence. */
function announce(config: Config, log: Logger, db: Database, withRedis: boolean, metricsServed: boolean): void {
  log.info('shipyard listening', {
    url: config.publicUrl,
    api: `${config.publicUrl}/api/v1`,
    mcp: `${config.publicUrl}/api/v1/mcp`,
    spec: `${config.publicUrl}/api/v1/openapi.json`,
    database: `${db.kind} (${db.location})`,
    rateLimits: withRedis
      ? 'shared in Redis (counted per instance while it does not answer)'
      : 'counted per instance (no REDIS_URL)',
    // What the heap may grow to (HEAP_MB, bin/server-options.mjs, plus the young generation).
    heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
    telemetry: telemetryLine(config, metricsServed),
  });
  if (config.telemetry && !telemetryStarted())
    log.error(
      'OpenTelemetry is configured (OTEL_* or METRICS_PORT) but was not started: run the server as `bin/shipyard serve` or `npm start`, or give node `--import ./dist/src/instrument.js`',
    );
}

/** What OpenTelemetry does here, in a few words: where traces and metrics go. */
function telemetryLine(config: Config, metricsServed: boolean): string {
  const t = config.telemetry;
  if (!t) return 'off';
  const metricsAt = t.prometheus && `http://${t.prometheus.host}:${t.prometheus.port}/metrics`;
  return [
    t.traces ? 'traces by OTLP' : undefined,
    t.otlpMetrics ? 'metrics by OTLP' : undefined,
    metricsAt &&
      (metricsServed ? `Prometheus metrics at ${metricsAt}` : `no Prometheus metrics (${metricsAt} could not listen)`),
  ]
    .filter(Boolean)
    .join(', ');
}

/**
 * For a person at a terminal, the last thing the start prints: where to open, and what to run
 * next. Machines read the JSON lines above it.
 */
function greeting(publicUrl: string): string {
  return [
    '',
    `Shipyard is running at ${publicUrl} — open ${publicUrl}/signup to create your account, then a key under Settings → Manage API keys.`,
    `Next: curl -H "Authorization: Bearer <your key>" ${publicUrl}/api/v1/users/me   (Ctrl-C stops the server)`,
    '',
    '',
  ].join('\n');
}

/** How long releasing the database, Redis and the password thread may take once the requests are done. */
const RELEASE_S = 30;

/**
 * On SIGTERM, SIGINT or SIGHUP, or its launcher's end: stop background work and accepting
 * connections, let in-flight requests finish (10 s at most), then release the database, Redis and
 * the password thread (RELEASE_S at most), and exit 0.
 */
function stopGracefully(
  server: Server,
  log: Logger,
  hooks: { launcherGone: Promise<void> | undefined; stopWork: () => void; release: () => Promise<void> },
): void {
  let stopping = false;
  const stop = (why: { signal: string } | { reason: string }) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', why);
    hooks.stopWork();
    const inFlight = setTimeout(() => {
      log.error('in-flight requests did not finish within 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
    server.close(async () => {
      // The requests are done; releasing has a bound of its own, longer than theirs: an embedded
      // database writes its files on close (a new one, every migration's), which a loaded
      // machine makes slow, and leaving before it is done leaves it to recover on the next start.
      clearTimeout(inFlight);
      const releasing = setTimeout(() => {
        log.error(`the database, Redis and the password thread were not released within ${RELEASE_S} s; exiting`);
        process.exit(1);
      }, RELEASE_S * 1000).unref();
      await hooks.release();
      clearTimeout(releasing);
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  // SIGHUP too: the terminal that ran it was closed, or its launcher passed one on.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop({ signal }));
  void hooks.launcherGone?.then(() => stop({ reason: 'its launcher ended' }));
}

/**
 * Settles when the launcher (bin/shipyard.mjs, which says so with LAUNCHER_CHANNEL_ARG) ends,
 * however it ends: the channel it gave the server closes with it. Killed outright (SIGKILL), a
 * launcher can pass no signal on, and the server would go on serving, holding the port and the
 * embedded database, with nobody left to stop it. A channel that closed before this looked is
 * a launcher already gone. The channel keeps nothing alive.
 */
function launcherEnded(): Promise<void> {
  if (!process.connected) return Promise.resolve();
  const gone = new Promise<void>((resolve) => process.once('disconnect', resolve));
  process.channel?.unref();
  return gone;
}

// Run as the entry module (bin/shipyard.mjs serve), not imported (tests): in any directory, spaces included.
if (import.meta.main) {
  // A setting refused (loadConfig) is said the same way as a start that failed: one line.
  Promise.resolve()
    .then(() => serve(loadConfig(), { launcherChannel: process.argv.includes(LAUNCHER_CHANNEL_ARG) }))
    .catch((err: Error) => {
      flushLogs();
      process.stderr.write(`shipyard: ${err.message}\n`);
      process.exit(1);
    });
}

/**
 * Housekeeping, once at start and then every hour: each sweep on its own EntityManager, what it
 * removed logged, a failure logged and left for the next hour.
 */
function sweepHourly(
  orm: Database['orm'],
  log: Logger,
  sweeps: Record<string, (em: EntityManager) => Promise<number>>,
): () => void {
  const run = () => {
    for (const [what, sweep] of Object.entries(sweeps))
      sweep(orm.em.fork()).then(
        (removed) => removed && log.info(what, { removed }),
        (error) => log.error(`${what}: the sweep failed`, { error }),
      );
  };
  run();
  const timer = setInterval(run, 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
