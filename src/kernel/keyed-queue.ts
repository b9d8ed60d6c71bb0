/**
 * Work queued by key in this process, at most `concurrency` at a time per key: a writer to a busy
 * row waits here, holding nothing, instead of on the row's lock in the database, holding a pooled
 * connection (sixty writers to one project once held twenty-seven of them, and other users' reads
 * waited for a connection). A few at work per key keep the database's lock handed straight from
 * one to the next (each has its transaction begun when the lock comes free); the rest wait here.
 * Across instances the database's row lock still orders them. A key with `maxWaiting` already
 * waiting refuses the next with a 503 (Retry-After), rather than hold memory and a request
 * deadline's worth of callers.
 */
import { ProblemError } from './problem.js';

type Line = { running: number; waiting: (() => void)[] };

export class KeyedQueue {
  readonly #lines = new Map<string, Line>();

  constructor(private readonly opts: { concurrency: number; maxWaiting: number }) {}

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let line = this.#lines.get(key);
    if (!line) {
      line = { running: 0, waiting: [] };
      this.#lines.set(key, line);
    }
    if (line.running >= this.opts.concurrency) {
      if (line.waiting.length >= this.opts.maxWaiting)
        throw new ProblemError(
          503,
          'busy',
          'Busy',
          `This resource is taking ${this.opts.maxWaiting} writes at once already; nothing was changed. Retry in a moment.`,
          {},
          { 'Retry-After': '1' },
        );
      // The one that ends hands its place over (running stays counted).
      await new Promise<void>((resolve) => line.waiting.push(resolve));
    } else line.running++;
    try {
      return await work();
    } finally {
      const next = line.waiting.shift();
      if (next) next();
      else if (--line.running === 0) this.#lines.delete(key);
    }
  }
}
