/** Telling a database that is down or unreachable from any other failure (the drivers' own codes and words). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** The database is down or unreachable: a 503 the client can retry, not a 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (
    let e = err as { name?: string; code?: string; message?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'ConnectionException') return true;
    if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
    if (
      /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/i.test(
        e.message ?? '',
      )
    )
      return true;
  }
  return false;
}
