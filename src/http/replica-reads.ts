/**
 * Which reads go to the read replica (DATABASE_READ_URL), and for whom. A replica lags the primary
 * by a moment, so only reads of what others wrote go there, where a moment does not matter:
 * public profiles and their lists, the posts feed, jobs, the radar and the platform's counts.
 * Everything else, every write and everything in a transaction stays on the primary. Search
 * stays there too: its page cache is dropped by a counter and a lock a standby does not share.
 *
 * A user who sent a write (any request but a GET, REST or MCP) reads from the primary for the
 * next STICKY_MS on every instance: the mark is kept where the request budgets are (Redis when it
 * is set; in this process without it, where a balancer's sticky sessions keep it true), so a
 * key's own write is read back at once.
 */
import type { RequestHandler } from 'express';
import type { Counters } from '../budgets/counters.js';
import { readFromReplica } from '../db/reads.js';

/** The operations that may read from the replica. */
const REPLICA_OPERATIONS: ReadonlySet<string> = new Set([
  'getUser',
  'listUserProjects',
  'listUserPosts',
  'listPosts',
  'listJobs',
  'getJob',
  'listRadar',
  'listRadarJobs',
  'listRadarProjects',
  'listPopularTags',
  'listPopularSkills',
  'getStats',
]);

/** How long after a write its user's reads stay on the primary: far longer than a replica's usual lag. */
export const STICKY_MS = 5_000;

const wroteKey = (userId: string) => `wrote:{${userId}}`;

export type ReplicaReads = {
  /** Marks the user of a request that is not a GET, before it runs: their next reads go to the primary. */
  noteWrites: RequestHandler;
  /** Sends a replica-able GET to the replica, unless its user wrote in the last STICKY_MS. */
  route: RequestHandler;
};

export function replicaReads(counters: Counters): ReplicaReads {
  return {
    noteWrites: (req, res, next) => {
      const userId = req.actor?.userId;
      if (!userId || req.method === 'GET' || req.method === 'HEAD') return next();
      // Marked before it runs, and again once it is answered: the 5 s run from the commit, however
      // long the write waited (a busy project's queue, a lock).
      res.on('finish', () => void counters.mark(wroteKey(userId), STICKY_MS).catch(() => undefined));
      counters.mark(wroteKey(userId), STICKY_MS).then(
        () => next(),
        () => next(),
      );
    },
    route: (req, _res, next) => {
      const userId = req.actor?.userId;
      const operation = req.openapi?.schema?.operationId;
      const reads = req.method === 'GET' || req.method === 'HEAD';
      if (!userId || !reads || !operation || !REPLICA_OPERATIONS.has(operation)) return next();
      counters.add(wroteKey(userId), 0, STICKY_MS).then(
        ({ count }) => {
          if (count === 0) readFromReplica(req.em);
          next();
        },
        () => next(),
      );
    },
  };
}
