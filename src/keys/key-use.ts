/**
 * Where and by what each key is used: its last use, channel and client on the key, and each
 * address and client it was seen from (the keys page shows the last five addresses). A key's
 * first use, and each address or client it never used before, is an entry in its owner's
 * security log.
 *
 * The request path only notes the use in memory (`note`). What was noted is written every
 * `flushMs` (one short transaction per key) and when the server stops, and only what is due: a
 * key's last use at most once a minute, a known address or client at most every five minutes,
 * so that a busy key costs about one write a minute. A use noted by a process that is then
 * killed outright is lost from these figures; writes made with a key are logged on their own
 * (src/writes/writes.service.ts).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../kernel/logger.js';
import {
  columnText,
  recordSecurityEvent,
  type Channel,
  type SecurityEventKind,
} from '../security-log/security-log.service.js';
import { ApiKey } from './api-key.entity.js';
import { forgetOldestSightings, sightingCounts, type SightingKind, upsertSighting } from './keys.queries.js';

const LAST_USE_EVERY_MS = 60_000;
const SIGHTING_EVERY_MS = 5 * 60_000;
/** New addresses and clients one batch takes per key: the rest wait for their next request. */
const NEW_PER_BATCH = 10;
/** Log entries about new addresses and clients per key and hour (per instance): a key that
 *  changes its User-Agent on every request cannot flood its owner's log. */
const ENTRIES_PER_HOUR = 20;
/** What this process remembers (last writes, MCP clients), oldest forgotten first. */
const REMEMBERED_IN_PROCESS = 50_000;

export type Use = {
  keyId: string;
  userId: string;
  channel: Extract<Channel, 'rest' | 'mcp'>;
  address?: string;
  client?: string;
};

type Pending = {
  userId: string;
  at: Date;
  channel: Use['channel'];
  address: string | null;
  client: string | null;
  /** Sightings to write: `kind\nvalue` → when. */
  seen: Map<string, Date>;
};

const sighting = (kind: SightingKind, value: string) => `${kind}\n${value}`;

/** A Map that forgets its oldest entry past REMEMBERED_IN_PROCESS. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= REMEMBERED_IN_PROCESS) map.delete(map.keys().next().value!);
  map.set(key, value);
}

export class KeyUse {
  #pending = new Map<string, Pending>();
  /** When this process last wrote a key's use (`keyId`) or a sighting (`keyId\nkind\nvalue`). */
  #written = new Map<string, number>();
  #mcpClients = new Map<string, string>();
  #entries = new Map<string, { hour: number; count: number }>();
  #writing: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly orm: MikroORM,
    private readonly log: Logger,
    flushMs = 2_000,
  ) {
    // A tick while a write is running waits for the next one: writes never queue up.
    this.#timer = setInterval(() => {
      if (!this.#writing) void this.#start();
    }, flushMs);
    this.#timer.unref();
  }

  /** Notes one use, in memory: the request waits for nothing. */
  note(use: Use, at = new Date()): void {
    const address = columnText(use.address, 64);
    const client = columnText(use.client, 200);
    const due = (key: string, everyMs: number) => at.getTime() - (this.#written.get(key) ?? 0) >= everyMs;
    const sightings = (
      [
        ['address', address],
        ['client', client],
      ] as const
    ).filter(([kind, value]) => value && due(`${use.keyId}\n${sighting(kind, value)}`, SIGHTING_EVERY_MS));
    let pending = this.#pending.get(use.keyId);
    if (!pending && sightings.length === 0 && !due(use.keyId, LAST_USE_EVERY_MS)) return;
    pending ??= { userId: use.userId, at, channel: use.channel, address: null, client: null, seen: new Map() };
    this.#pending.set(use.keyId, pending);
    Object.assign(pending, {
      at,
      channel: use.channel,
      address: address ?? pending.address,
      client: client ?? pending.client,
    });
    for (const [kind, value] of sightings) {
      const id = sighting(kind, value!);
      if (pending.seen.has(id) || pending.seen.size < NEW_PER_BATCH) pending.seen.set(id, at);
    }
  }

  /**
   * The name and version an MCP client gave at initialize: the client of the calls that follow
   * with the same key and User-Agent (a stateless server hears it once per connection).
   */
  noteMcpClient(keyId: string, userAgent: string | undefined, name: string, version: string): string {
    const client = columnText(`${name} ${version}`, 200) ?? 'unnamed MCP client';
    remember(this.#mcpClients, `${keyId}\n${userAgent ?? ''}`, client);
    return client;
  }

  /** The MCP client this process last saw initialize with this key and User-Agent, if any. */
  mcpClientOf(keyId: string, userAgent: string | undefined): string | undefined {
    return this.#mcpClients.get(`${keyId}\n${userAgent ?? ''}`);
  }

  /** Writes everything noted so far (after a write that is running). */
  async flush(): Promise<void> {
    await this.#writing;
    await this.#start();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  #start(): Promise<void> {
    this.#writing = this.#write().finally(() => {
      this.#writing = undefined;
    });
    return this.#writing;
  }

  async #write(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new Map();
    for (const [keyId, pending] of batch) {
      try {
        const allowed = this.#entriesLeft(keyId, pending.at);
        const written = await this.orm.em.fork().transactional((em) => writeUse(em, keyId, pending, allowed));
        this.#spend(keyId, pending.at, written);
        remember(this.#written, keyId, pending.at.getTime());
        for (const [id, at] of pending.seen) remember(this.#written, `${keyId}\n${id}`, at.getTime());
      } catch (error) {
        this.log.error('the use of a key could not be written', { keyId, error });
      }
    }
  }

  #entriesLeft(keyId: string, at: Date): number {
    const hour = Math.floor(at.getTime() / 3_600_000);
    const spent = this.#entries.get(keyId);
    return ENTRIES_PER_HOUR - (spent?.hour === hour ? spent.count : 0);
  }

  #spend(keyId: string, at: Date, count: number): void {
    if (count === 0) return;
    const hour = Math.floor(at.getTime() / 3_600_000);
    const spent = this.#entries.get(keyId);
    remember(this.#entries, keyId, { hour, count: (spent?.hour === hour ? spent.count : 0) + count });
  }
}

/**
 * One key's noted use: its row, its sightings, and log entries (at most `allowed`) for its first
 * use and for each address or client it never had. A key used before sightings were kept learns
 * them without entries. Returns how many entries it wrote.
 */
async function writeUse(em: EntityManager, keyId: string, pending: Pending, allowed: number): Promise<number> {
  const key = await em.findOne(ApiKey, { id: keyId }, { fields: ['name', 'lastUsedAt'] });
  if (!key) return 0; // deleted meanwhile
  const firstUse = !key.lastUsedAt;
  await em.nativeUpdate(
    ApiKey,
    { id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: pending.at } }] },
    { lastUsedAt: pending.at, lastChannel: pending.channel, ...(pending.client ? { lastClient: pending.client } : {}) },
  );
  const fresh: { kind: SightingKind; value: string }[] = [];
  for (const [id, at] of pending.seen) {
    const [kind, value] = id.split('\n') as [SightingKind, string];
    if (await upsertSighting(em, keyId, kind, value, at)) fresh.push({ kind, value });
  }
  const entries = (firstUse ? [firstUseEntry(pending)] : await newcomers(em, keyId, fresh, pending)).slice(0, allowed);
  for (const entry of entries)
    await recordSecurityEvent(em, {
      userId: pending.userId,
      keyId,
      keyName: key.name,
      channel: pending.channel,
      ...entry,
    });
  for (const kind of new Set(fresh.map((f) => f.kind))) await forgetOldestSightings(em, keyId, kind);
  return entries.length;
}

type Entry = { kind: SecurityEventKind; address: string | null; client: string | null };

const firstUseEntry = (pending: Pending): Entry => ({
  kind: 'key.first_use',
  address: pending.address,
  client: pending.client,
});

/** An entry for each fresh sighting of a kind the key already had others of. */
async function newcomers(
  em: EntityManager,
  keyId: string,
  fresh: { kind: SightingKind; value: string }[],
  pending: Pending,
): Promise<Entry[]> {
  if (fresh.length === 0) return [];
  const counts = await sightingCounts(em, keyId);
  const hadOthers = (kind: SightingKind) => counts[kind] > fresh.filter((f) => f.kind === kind).length;
  return fresh
    .filter((f) => hadOthers(f.kind))
    .map((f) =>
      f.kind === 'address'
        ? { kind: 'key.new_address', address: f.value, client: pending.client }
        : { kind: 'key.new_client', address: pending.address, client: f.value },
    );
}
