/**
 * The service's logger: pino, one JSON line per event on stderr, or readable lines when stderr is
 * a terminal (pino-pretty, in this process). It never receives a token: the Authorization header
 * is not logged and paths are logged without their query string; as a second line of defence
 * a field named like a secret (at the top, or under `headers` or `body`) is replaced before it is
 * written.
 */
import { pino, stdSerializers } from 'pino';
import { PinoPretty } from 'pino-pretty';

import type { Logger } from '../kernel/logger.js';
import { traceId } from '../telemetry/telemetry.js';
import { telemetryStarted } from '../telemetry/stop.js';

const SECRETS = ['authorization', 'token', 'password', 'cookie', 'apiKey', 'secret'];

/**
 * Lines wait here until 4 KiB have gathered or a tenth of a second has passed, and go out in one
 * write: a write per line was a system call, and a wake-up of whoever reads the log, per request.
 * The writes are asynchronous, so a reader that stops reading never stalls a request; past 16 MiB
 * waiting, lines are dropped rather than memory exhausted. What is waiting is written out when the
 * process exits, on a fatal error too; only a kill -9 or a power cut loses it.
 */
function bufferedStderr() {
  const stream = pino.destination({
    dest: 2,
    sync: false,
    minLength: 4096,
    periodicFlush: 100,
    maxLength: 16 * 1024 * 1024,
  });
  buffered.add(stream);
  return stream;
}
const buffered = new Set<ReturnType<typeof pino.destination>>();

/** Writes out the lines still waiting, now: before a last word written to stderr some other way, so that it comes last. */
export function flushLogs(): void {
  for (const stream of buffered) {
    try {
      stream.flushSync();
    } catch {
      // Closed already, or stderr is gone: nothing more can be written there.
    }
  }
}

/** `destination` is for tests; by default stderr, pretty when it is a terminal. */
export function createLogger(
  level: 'silent' | 'error' | 'info',
  destination: NodeJS.WritableStream | undefined = undefined,
): Logger {
  const pretty = destination === undefined && process.stderr.isTTY === true;
  // Only a process that started OpenTelemetry has a trace to name (src/instrument.ts runs before this).
  const traced = telemetryStarted() !== undefined;
  const logger = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // The trace the line was written in, when there is one: logs and traces meet on it.
      mixin: traced
        ? () => {
            const id = traceId();
            return id ? { traceId: id } : {};
          }
        : undefined,
      serializers: { error: stdSerializers.err, err: stdSerializers.err },
      // Named paths only: a wildcard path costs the service about 15 µs a request (make bench).
      redact: { paths: [...SECRETS, ...SECRETS.flatMap((s) => [`headers.${s}`, `body.${s}`])], censor: '[redacted]' },
    },
    pretty
      ? PinoPretty({
          destination: 2,
          sync: true,
          singleLine: true,
          translateTime: 'SYS:HH:MM:ss',
          ignore: 'pid,hostname',
        })
      : (destination ?? bufferedStderr()),
  );
  return {
    info: (msg, fields) => logger.info(fields ?? {}, msg),
    error: (msg, fields) => logger.error(fields ?? {}, msg),
  };
}
