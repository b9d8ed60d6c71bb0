/**
 * Rows that many requests write on their own (outside a transaction) and that share statements:
 * while one statement is on its way, the rows that arrive wait for it and then go together in the
 * next, so a busy moment costs one statement and one commit for many rows, and a quiet one sends
 * each row at once, with no delay added. Each caller is answered when its own row is written.
 * When a statement of several rows fails, each of them is tried alone, so that one bad row fails
 * only its own caller; not when the database is unavailable, which fails them all at once rather
 * than making each wait in turn.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isDatabaseUnavailable } from './unavailable.js';

/** The most rows one statement takes. */
const MAX_ROWS = 200;

type Waiting<R> = { row: R; resolve: () => void; reject: (error: unknown) => void };
type Queue<R> = { waiting: Waiting<R>[]; writing: boolean };

/**
 * `write` writes the rows it is given in one statement, outside any transaction; the result
 * writes one row, sharing the statement with the rows written at the same moment on the same
 * database.
 */
export function sharedWrites<R>(
  write: (em: EntityManager, rows: R[]) => Promise<void>,
): (em: EntityManager, row: R) => Promise<void> {
  // One queue per database (an ORM's configuration, which each of its forks shares).
  const queues = new WeakMap<object, Queue<R>>();
  const drain = async (em: EntityManager, queue: Queue<R>) => {
    queue.writing = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, MAX_ROWS);
      try {
        await write(
          em,
          batch.map((w) => w.row),
        );
        for (const w of batch) w.resolve();
      } catch (error) {
        if (batch.length === 1 || isDatabaseUnavailable(error)) for (const w of batch) w.reject(error);
        else for (const w of batch) await write(em, [w.row]).then(w.resolve, w.reject);
      }
    }
    queue.writing = false;
  };
  return (em, row) => {
    if (em.isInTransaction()) throw new Error('shared writes are made outside a transaction');
    let queue = queues.get(em.config);
    if (!queue) {
      queue = { waiting: [], writing: false };
      queues.set(em.config, queue);
    }
    const waiting = queue.waiting;
    const written = new Promise<void>((resolve, reject) => waiting.push({ row, resolve, reject }));
    if (!queue.writing) void drain(em, queue);
    return written;
  };
}
