import { availableParallelism } from 'node:os';

/** How many test files run at once (TEST_WORKERS, default one per core), and each worker's database. */
export const TEST_WORKERS = Math.max(1, Math.floor(Number(process.env.TEST_WORKERS)) || availableParallelism());

/** Worker `n`'s database on PostgreSQL: DATABASE_URL's, with `_w<n>` after its name. */
export function workerDatabase(url: string, worker: number): string {
  const u = new URL(url);
  u.pathname = `${u.pathname}_w${worker}`;
  return u.toString();
}
