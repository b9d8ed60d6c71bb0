/** What code outside the HTTP layer may log through: src/http/log.ts builds it (pino), tests pass a silent one. */
export type Logger = {
  info: (msg: string, fields?: Record<string, unknown>) => void;
  error: (msg: string, fields?: Record<string, unknown>) => void;
};

/**
 * Logs an error at most every 30 seconds, with how many like it came meanwhile: while the
 * database is away, each poll of each worker fails, and one line says as much as hundreds.
 */
export function everyThirtySeconds(log: Logger, what: string): (error: unknown) => void {
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
