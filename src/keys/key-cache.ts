/**
 * Recently seen API keys, by token hash, so that a busy key costs one database read every few
 * seconds instead of one per request. What is cached is the key's row as read (scopes, expiry,
 * revocation), never the token.
 *
 * The security bound: a key revoked in this process (the web screen, a test) is dropped at once
 * through `keyEvents`; a key revoked elsewhere (the operator CLI, another instance) is refused
 * within `ttlMs` (KEY_CACHE_SECONDS, 10 s by default; 0 turns the cache off). Expiry is checked
 * against the cached expiry on every request, so an expired key is refused on the second.
 */
import { EventEmitter } from 'node:events';

export type CachedKey = {
  id: string;
  userId: string;
  scopes: readonly string[];
  expiresAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
};

/** Process-wide key events: `revoked` (keyId) drops that key from every cache in this process. */
export const keyEvents = new EventEmitter();
keyEvents.setMaxListeners(0);

export class KeyCache {
  readonly #entries = new Map<string, { key: CachedKey; until: number }>();
  readonly #onRevoked = (keyId: string) => {
    for (const [hash, entry] of this.#entries) if (entry.key.id === keyId) this.#entries.delete(hash);
  };

  constructor(readonly ttlMs: number, private readonly maxEntries = 10_000) {
    if (ttlMs > 0) keyEvents.on('revoked', this.#onRevoked);
  }

  get(tokenHash: string, now = Date.now()): CachedKey | undefined {
    const entry = this.#entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.#entries.delete(tokenHash);
      return undefined;
    }
    return entry.key;
  }

  set(tokenHash: string, key: CachedKey, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(tokenHash, { key, until: now + this.ttlMs });
  }

  close(): void {
    keyEvents.off('revoked', this.#onRevoked);
    this.#entries.clear();
  }
}
