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

/** A write a pipe takes whole, never interleaved with another writer's (PIPE_BUF on Linux). */
const BATCH_BYTES = 4096;
const BATCH_MS = 100;
/** What stderr may hold unwritten before lines are dropped instead of queued. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;

/**
 * The log's lines on their way to stderr, in batches: a write per line was a system call, and a
 * wake-up of whoever reads the log, per request. Lines wait until the next would pass 4 KiB (a
 * longer line goes alone) or a tenth of a second has gone by, then go out as one
 * `process.stderr` write of whole lines, never blocking: Node queues what a full pipe cannot take
 * yet. Past 16 MiB queued, lines are dropped, and a line says how many once stderr drains; a
 * broken stderr (its reader gone) drops them all, instead of ending the process. Whatever waits
 * is handed to stderr when the process exits. Something written to stderr directly (Node's
 * warnings) may come before lines still waiting; the fatal paths flush first (flushLogs).
 */
class StderrBatches {
  #lines: string[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #dropped = 0;
  #broken = false;

  constructor() {
    process.once('exit', () => this.flush());
    process.stderr.on('error', () => {
      this.#broken = true;
    });
  }

  write(line: string): boolean {
    if (this.#broken) return true;
    if (process.stderr.writableLength > MAX_WAITING_BYTES) this.#dropped++;
    else {
      const bytes = Buffer.byteLength(line);
      if (this.#bytes + bytes > BATCH_BYTES) this.flush();
      this.#lines.push(line);
      this.#bytes += bytes;
    }
    this.#timer ??= setTimeout(() => this.flush(), BATCH_MS).unref();
    return true;
  }

  /** pino's `logger.flush(cb)` passes a callback: it is called once the lines are handed over. */
  flush(done?: (err?: Error) => void): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#broken) return void done?.();
    if (this.#dropped && process.stderr.writableLength <= MAX_WAITING_BYTES) {
      const msg = 'log lines dropped: stderr was not being read';
      process.stderr.write(
        `${JSON.stringify({ level: 'error', time: new Date().toISOString(), dropped: this.#dropped, msg })}\n`,
      );
      this.#dropped = 0;
    }
    // Still backed up: the count waits for the next try.
    if (this.#dropped) this.#timer = setTimeout(() => this.flush(), BATCH_MS).unref();
    if (this.#lines.length) {
      const batch = this.#lines.join('');
      this.#lines = [];
      this.#bytes = 0;
      process.stderr.write(batch);
    }
    done?.();
  }
}

/** The second isoTime last wrote, and its line's `,"time":"YYYY-MM-DDTHH:MM:SS.` */
let second = Number.NaN;
let secondHead = '';

/**
 * `,"time":"…"` as pino's isoTime writes it (Date#toISOString), the date and the second made once
 * a second instead of once a line: the access log writes one line per request.
 */
export function isoTime(at = Date.now()): string {
  const now = Math.trunc(at); // as a Date keeps it
  const s = Math.floor(now / 1000);
  if (s !== second) {
    second = s;
    // Everything but the milliseconds and the Z (a year past 9999 is written with six digits).
    secondHead = `,"time":"${new Date(s * 1000).toISOString().slice(0, -4)}`;
  }
  return `${secondHead}${String(now - s * 1000).padStart(3, '0')}Z"`;
}

let batches: StderrBatches | undefined;
/** One for the process, whoever makes a logger. */
const stderrBatches = () => (batches ??= new StderrBatches());

/** Hands the lines still waiting to stderr, now: before a last word written there some other way, so that it comes last. */
export function flushLogs(): void {
  batches?.flush();
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
      timestamp: () => isoTime(),
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
      : (destination ?? stderrBatches()),
  );
  return {
    info: (msg, fields) => logger.info(fields ?? {}, msg),
    error: (msg, fields) => logger.error(fields ?? {}, msg),
  };
}
