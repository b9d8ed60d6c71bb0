/**
 * Work queued by key in this process, one at a time per key: a writer to a busy row waits here,
 * holding nothing, instead of on the row's lock in the database, holding a pooled connection
 * (sixty writers to one project once held twenty-seven of them, and other users' reads waited for
 * a connection). Across instances the database's row lock still orders them; each instance sends
 * at most one writer per key at a time. A key with `maxWaiting` already waiting refuses the next
 * with a 503 (Retry-After), rather than hold memory and a request deadline's worth of callers.
 */
import { ProblemError } from './problem.js';

export class KeyedQueue {
  /** Per key: when its last queued work ends, and how many are queued or at work. */
  readonly #tails = new Map<string, { done: Promise<unknown>; pending: number }>();

  constructor(private readonly maxWaiting: number) {}

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const entry = this.#tails.get(key) ?? { done: Promise.resolve(), pending: 0 };
    // One at work, and up to maxWaiting behind it.
    if (entry.pending > this.maxWaiting)
      throw new ProblemError(
        503,
        'busy',
        'Busy',
        `This resource is taking ${this.maxWaiting} writes at once already; nothing was changed. Retry in a moment.`,
        {},
        { 'Retry-After': '1' },
      );
    entry.pending++;
    const result = entry.done.then(work);
    // The next one waits for this one to end, however it ends.
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    entry.done = done;
    this.#tails.set(key, entry);
    void done.then(() => {
      entry.pending--;
      if (entry.pending === 0) this.#tails.delete(key);
    });
    return result;
  }
}
