/**
 * Rows that many requests write on their own (outside a transaction) and that share statements:
 * while one statement of a group (an account's security-log entries) is on its way, the rows of
 * that group that arrive wait for it and then go together in the next, so a busy moment costs
 * one statement and one commit for many rows, and a quiet one sends each row at once, with no
 * delay added. Each caller is answered when its own row is written.
 *
 * Groups never wait for each other: a statement held up by a lock on one account's row (its
 * foreign key's check waits for a transaction that holds that row) holds up only that account's
 * rows, as a statement of each row's own would. When a statement of several rows fails, each of
 * them is tried alone, so that one bad row fails only its own caller; once the database is
 * unavailable, the rest fail at once rather than each wait in turn.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isDatabaseUnavailable } from './unavailable.js';

/** The most rows one statement takes. */
const MAX_ROWS = 200;

type Waiting<R> = { row: R; resolve: () => void; reject: (error: unknown) => void };

/**
 * `write` writes the rows it is given, all of one group, in one statement outside any
 * transaction; the result writes one row, sharing the statement with the rows of its group
 * written at the same moment on the same database.
 */
export function sharedWrites<R>(
  write: (em: EntityManager, rows: R[]) => Promise<void>,
  groupOf: (row: R) => string,
): (em: EntityManager, row: R) => Promise<void> {
  // Per database (an ORM's configuration, which each of its forks shares), the rows waiting in
  // each group that has a statement on its way; a group is forgotten when it has none.
  const databases = new WeakMap<object, Map<string, Waiting<R>[]>>();

  const writeEach = async (em: EntityManager, batch: Waiting<R>[]) => {
    for (const [i, w] of batch.entries()) {
      try {
        await write(em, [w.row]);
        w.resolve();
      } catch (error) {
        w.reject(error);
        if (isDatabaseUnavailable(error)) {
          for (const rest of batch.slice(i + 1)) rest.reject(error);
          return;
        }
      }
    }
  };

  const drain = async (em: EntityManager, groups: Map<string, Waiting<R>[]>, group: string) => {
    const waiting = groups.get(group)!;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MAX_ROWS);
      try {
        await write(
          em,
          batch.map((w) => w.row),
        );
        for (const w of batch) w.resolve();
      } catch (error) {
        if (batch.length === 1 || isDatabaseUnavailable(error)) for (const w of batch) w.reject(error);
        else await writeEach(em, batch);
      }
    }
    groups.delete(group);
  };

  return (em, row) => {
    if (em.isInTransaction()) throw new Error('shared writes are made outside a transaction');
    let groups = databases.get(em.config);
    if (!groups) {
      groups = new Map();
      databases.set(em.config, groups);
    }
    const group = groupOf(row);
    const waiting = groups.get(group);
    return new Promise<void>((resolve, reject) => {
      if (waiting) return void waiting.push({ row, resolve, reject });
      groups.set(group, [{ row, resolve, reject }]);
      // A fork of its own: the caller's, with what it holds, is not kept while the group is busy.
      void drain(em.fork(), groups, group);
    });
  };
}
