import { availableParallelism } from 'node:os';

/**
 * How many test files run at once (TEST_WORKERS; by default one per core, at most four: on
 * PostgreSQL each file's servers hold a dozen connections or more, and the default
 * max_connections is 100), and each worker's database.
 */
export const TEST_WORKERS = Math.max(
  1,
  Math.floor(Number(process.env.TEST_WORKERS)) || Math.min(availableParallelism(), 4),
);

/** Worker `n`'s database on PostgreSQL: DATABASE_URL's, with `_w<n>` after its name. */
export function workerDatabase(url: string, worker: number): string {
  const u = new URL(url);
  u.pathname = `${u.pathname}_w${worker}`;
  return u.toString();
}
