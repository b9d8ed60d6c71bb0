/**
 * A small structured logger: one JSON line per event. It never receives a token: the
 * Authorization header is not logged and paths are logged without their query string.
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

export function createLogger(level: 'silent' | 'error' | 'info'): Logger {
  const write = (lvl: string, msg: string, fields?: Record<string, unknown>) =>
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...serialise(fields) })}\n`,
    );
  return {
    info: (msg, fields) => {
      if (level === 'info') write('info', msg, fields);
    },
    error: (msg, fields) => {
      if (level !== 'silent') write('error', msg, fields);
    },
  };
}
