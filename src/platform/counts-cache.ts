/**
 * One of the platform's counts (the stats, the popular tags, the popular skills), taken at most
 * once per `maxAgeMs` and shared by every caller. Each count reads whole tables: on the bench's
 * data (100k posts, 200k milestones) the stats cost PostgreSQL ~160 ms and the tags ~80 ms, so
 * counting on every request let 50 callers hold the database's two cores (11 requests/s, p99
 * 5 s). Callers that arrive while a count is being taken wait for that count instead of
 * starting their own. A count that fails is not kept: the next caller tries again.
 *
 * `maxAgeMs` 0 turns it off: every request counts alone and sees every write committed before it.
 */
export class CountsCache<T> {
  #taken: { at: number; value: T } | undefined;
  #pending: Promise<T> | undefined;

  constructor(
    readonly maxAgeMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The kept count if it was taken less than `maxAgeMs` ago, else the one being taken, else `count()`'s. */
  get(count: () => Promise<T>): Promise<T> {
    if (this.maxAgeMs <= 0) return count();
    if (this.#taken && this.clock() - this.#taken.at < this.maxAgeMs) return Promise.resolve(this.#taken.value);
    if (this.#pending) return this.#pending;
    // Its age runs from when it was started: an answer is never older than maxAgeMs plus one count.
    const at = this.clock();
    const pending = count().then((value) => {
      this.#taken = { at, value };
      return value;
    });
    const done = () => {
      if (this.#pending === pending) this.#pending = undefined;
    };
    pending.then(done, done); // both paths handled here; the callers get `pending` itself and its error
    this.#pending = pending;
    return pending;
  }
}
