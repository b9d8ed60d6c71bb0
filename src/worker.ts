/**
 * `shipyard worker`: the webhook worker alone, for operators who run it apart from the HTTP
 * servers (then set WEBHOOK_WORKER=false on those). It needs PostgreSQL: the embedded database
 * is opened by one process only, and there `shipyard serve` runs the worker itself. Any number
 * of workers may run; each delivery is tried by one of them at a time. Stops on SIGTERM, SIGINT
 * or SIGHUP, letting the attempts in flight end (5 s at most).
 */
import { databaseSettings, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { createLogger, flushLogs } from './http/log.js';
import { runWebhookWorker, webhookSettings } from './main.js';
import { stopTelemetry } from './telemetry/stop.js';

export async function work(config: Config = loadConfig()): Promise<void> {
  if (!config.databaseUrl)
    throw new Error(
      'the worker runs apart only on PostgreSQL (set DATABASE_URL): the embedded database is opened by one process, and `shipyard serve` runs the worker itself',
    );
  const log = createLogger(config.logLevel);
  const db = await openDatabase({
    ...databaseSettings(config),
    command: 'shipyard worker',
    poolMax: 5,
    migrate: config.migrateOnStart,
    refusePending: true,
  });
  // Stop signals are heard from the start: one that comes while the worker starts waits for it.
  const worker = runWebhookWorker(config, db, log, webhookSettings(config));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await (await worker.catch(() => undefined))?.stop();
    await db.close();
    await stopTelemetry();
    log.info('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
  await worker;
}

if (import.meta.main) {
  work().catch((err: Error) => {
    flushLogs();
    process.stderr.write(`shipyard worker: ${err.message}\n`);
    process.exit(1);
  });
}
