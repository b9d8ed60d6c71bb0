/**
 * A small structured logger: one JSON line per event. It never receives a token: the
 * Authorization header is not logged and paths are logged without their query string.
 *
 * Info lines (the access log is one per request) wait at most one turn of the event loop and
 * go to stderr together, in one write: writing each line on its own was a system call per
 * request (stderr is synchronous on a pipe or a file), 4% of a busy server's CPU. An error
 * line is written at once, after whatever waits before it, and the process's exit writes
 * what is left; so a line can be lost only if the process is killed outright.
 */
export type Logger = {
  info: (msg: string, fields?: Record<string, unknown>) => void;
  error: (msg: string, fields?: Record<string, unknown>) => void;
};

function serialise(fields: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
  }
  return out;
}

/** Written at once past this size, rather than held for the rest of the turn. */
const MAX_PENDING = 64 * 1024;
let pending = '';
let scheduled = false;
let exitHooked = false;

/** Writes every waiting line now (on exit; and in tests that read the log). */
export function flushLog(): void {
  scheduled = false;
  if (!pending) return;
  const out = pending;
  pending = '';
  process.stderr.write(out);
}

function emit(line: string, now: boolean): void {
  pending += line;
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushLog);
  }
  if (now || pending.length >= MAX_PENDING) flushLog();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushLog);
  }
}

export function createLogger(level: 'silent' | 'error' | 'info'): Logger {
  const line = (lvl: string, msg: string, fields?: Record<string, unknown>) =>
    JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...serialise(fields) }) + '\n';
  return {
    info: (msg, fields) => { if (level === 'info') emit(line('info', msg, fields), false); },
    error: (msg, fields) => { if (level !== 'silent') emit(line('error', msg, fields), true); },
  };
}
