/**
 * Recently seen API keys, by token hash, so that a busy key costs one database read every few
 * seconds instead of one per request. What is cached is the key's row as read (scopes, expiry,
 * revocation, whether its account is disabled), never the token.
 *
 * The security bound: every change to who may use a key — a key revoked, deleted or changed; an
 * account disabled or deleted — is announced by the database itself (triggers, then
 * LISTEN/NOTIFY: src/keys/access-changes.ts), in whatever process or plain SQL it was made, and
 * every instance drops the key at once. While the notices cannot be heard (the listening
 * connection is being made again), nothing is cached, so no revocation can be missed; `ttlMs`
 * (KEY_CACHE_SECONDS, 0 turns the cache off) only bounds how long a row is reused at all. A key
 * revoked in this process is also dropped directly through `keyEvents`. Expiry is checked
 * against the cached expiry on every request.
 */
import { EventEmitter } from 'node:events';
import type { ChangeFeed, Unsubscribe } from '../db/changes.js';
import { ACCESS_CHANNEL, parseAccessChange } from './access-changes.js';
import { measure } from '../telemetry/telemetry.js';

export type CachedKey = {
  id: string;
  userId: string;
  /** The owning account is disabled: the key is refused. */
  userDisabled: boolean;
  scopes: readonly string[];
  expiresAt: Date;
  revokedAt: Date | null;
  /** Its name, for the security log's entries of what it did. */
  name: string;
  /** Handed to an app through OAuth sign-in: the way to a new one is to sign in again. */
  viaOAuth: boolean;
};

/** Process-wide key events: `revoked` (keyId) drops that key from every cache in this process. */
export const keyEvents = new EventEmitter();
keyEvents.setMaxListeners(0);

export class KeyCache {
  readonly #entries = new Map<string, { key: CachedKey; until: number }>();
  readonly #unsubscribe: Unsubscribe | undefined;
  /** Whether revocations are being heard: without a feed, the TTL is the only bound. */
  #live: boolean;
  /** Moves on every change heard, so that a row read before it is not stored after it. */
  #generation = 0;
  readonly #onRevoked = (keyId: string) => this.#drop((key) => key.id === keyId);

  constructor(
    readonly ttlMs: number,
    changes?: ChangeFeed,
    private readonly maxEntries = 10_000,
  ) {
    this.#live = !changes;
    if (ttlMs <= 0) return;
    keyEvents.on('revoked', this.#onRevoked);
    this.#unsubscribe = changes?.subscribe(ACCESS_CHANNEL, {
      onNotice: (payload) => {
        const change = parseAccessChange(payload);
        if (!change) return this.#drop(() => true);
        this.#drop((key) => (change.kind === 'key' ? key.id : key.userId) === change.id);
      },
      onLive: (live) => {
        // Notices sent while nobody listened are lost: start again from an empty cache.
        this.#drop(() => true);
        this.#live = live;
      },
    });
  }

  get(tokenHash: string, now = Date.now()): CachedKey | undefined {
    const key = this.#lookup(tokenHash, now);
    measure.keyCacheLookups.add(1, { 'shipyard.result': key ? 'hit' : 'miss' });
    return key;
  }

  #lookup(tokenHash: string, now: number): CachedKey | undefined {
    if (!this.#live) return undefined;
    const entry = this.#entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.#entries.delete(tokenHash);
      return undefined;
    }
    return entry.key;
  }

  /** Taken before reading a key from the database, and given back to `set`. */
  get generation(): number {
    return this.#generation;
  }

  /** Stores a key read while `generation` was current; a change heard since then means it may be stale. */
  set(tokenHash: string, key: CachedKey, generation: number, now = Date.now()): void {
    if (this.ttlMs <= 0 || !this.#live || generation !== this.#generation) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(tokenHash, { key, until: now + this.ttlMs });
  }

  close(): void {
    keyEvents.off('revoked', this.#onRevoked);
    this.#unsubscribe?.();
    this.#entries.clear();
  }

  #drop(matches: (key: CachedKey) => boolean): void {
    this.#generation++;
    for (const [hash, entry] of this.#entries) if (matches(entry.key)) this.#entries.delete(hash);
  }
}
