/**
 * Search pages, kept while nothing searchable has changed. A full-text search costs PostgreSQL
 * several milliseconds; the same words are asked for again and again (popular topics, a client
 * polling, pages back and forth), and a page read from here costs one tiny query instead.
 *
 * Freshness: every write that can change a result moves the `search_changes` counter before it
 * commits (migration ..._search_changes), in any process, and holds a shared lock until it has
 * committed. A page is stored under the counter's value only when it is known to hold every
 * change counted so far: the search ran after a moment when no counted change was uncommitted
 * (the lock was free) and the counter did not move from before that moment to the end of the
 * search. Any later change moves the counter, and pages stored under the old value are dropped
 * at once. The one thing no counter sees is time: an open job that reaches its expiry stays in
 * a stored page for at most `ttlMs` (SEARCH_CACHE_SECONDS, default 10; 0 turns the cache off).
 *
 * Whom a page may be shown to: callers who can see only public things (no private project
 * owned or joined, no hidden post of their own) share one page per query; anyone else gets
 * pages of their own. The key also holds which kinds of result the caller's scopes allow.
 */
export class SearchCache<T> {
  #generation = -1n;
  readonly #entries = new Map<string, { value: T; until: number }>();

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 1_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(generation: bigint, key: string, now = Date.now()): T | undefined {
    if (!this.#current(generation)) return undefined;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(generation: bigint, key: string, value: T, now = Date.now()): void {
    if (!this.enabled || !this.#current(generation)) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.#entries.size >= this.maxEntries && !this.#entries.has(key))
      this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, until: now + this.ttlMs });
  }

  /** A newer counter empties the cache; an older one (a request that read it before another did) is not used. */
  #current(generation: bigint): boolean {
    if (generation > this.#generation) {
      this.#entries.clear();
      this.#generation = generation;
    }
    return generation === this.#generation;
  }
}
