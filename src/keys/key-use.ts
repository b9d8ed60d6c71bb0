/**
 * Where and by what each key is used: its last use, channel and client on the key, and each
 * address and client it was seen from (the keys page shows the last five addresses). A key seen
 * from an address or client it never used before is marked in the security log.
 *
 * The request path only notes the use in memory (`note`); what was noted is written every
 * `flushMs` in one short transaction per key, and when the server stops. A use noted by a
 * process that is then killed outright is lost from these figures, never from the log of writes
 * (src/http/operations.ts records those before answering).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { reads } from '../db/reads.js';
import type { Logger } from '../kernel/logger.js';
import {
  columnText,
  recordSecurityEvent,
  type Channel,
  type SecurityEventKind,
} from '../security-log/security-log.service.js';
import { ApiKey } from './api-key.entity.js';

/** How many addresses and how many clients a key remembers: the page shows five of them. */
const REMEMBERED = 50;
/**
 * How many addresses and clients of one key a batch keeps: a key sending a new User-Agent with
 * every request cannot fill its owner's log faster than this every flush.
 */
const SEEN_PER_BATCH = 10;
/** How many MCP clients (by key) this process remembers between initialize and the calls that follow. */
const MCP_CLIENTS_KEPT = 10_000;

export type Use = {
  keyId: string;
  userId: string;
  channel: Extract<Channel, 'rest' | 'mcp'>;
  address?: string;
  client?: string;
};

type Pending = { userId: string; at: Date; channel: string; client: string | null; seen: Map<string, Date> };

/** A sighting's map key: its kind and its value. */
const sighting = (kind: 'address' | 'client', value: string) => `${kind}\n${value}`;

export class KeyUse {
  #pending = new Map<string, Pending>();
  #mcpClients = new Map<string, string>();
  #flushing: Promise<void> = Promise.resolve();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly orm: MikroORM,
    private readonly log: Logger,
    flushMs = 2_000,
  ) {
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
  }

  /** Notes one use (in memory only: it costs the request nothing it waits for). */
  note(use: Use, at = new Date()): void {
    let pending = this.#pending.get(use.keyId);
    if (!pending) {
      pending = { userId: use.userId, at, channel: use.channel, client: null, seen: new Map() };
      this.#pending.set(use.keyId, pending);
    }
    const client = columnText(use.client, 200);
    Object.assign(pending, { at, channel: use.channel, client: client ?? pending.client });
    const see = (entry: string) => {
      if (pending.seen.has(entry) || pending.seen.size < SEEN_PER_BATCH) pending.seen.set(entry, at);
    };
    if (use.address) see(sighting('address', columnText(use.address, 64)!));
    if (client) see(sighting('client', client));
  }

  /** The name and version an MCP client gave at initialize: the client of its key's later calls. */
  noteMcpClient(keyId: string, name: string, version: string): string {
    const client = columnText(`${name} ${version}`, 200) ?? 'unnamed MCP client';
    this.#mcpClients.delete(keyId);
    if (this.#mcpClients.size >= MCP_CLIENTS_KEPT) this.#mcpClients.delete(this.#mcpClients.keys().next().value!);
    this.#mcpClients.set(keyId, client);
    return client;
  }

  /** The MCP client this process last saw initialize with the key, if any. */
  mcpClientOf(keyId: string): string | undefined {
    return this.#mcpClients.get(keyId);
  }

  /** Writes what was noted; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  async #write(): Promise<void> {
    const batch = this.#pending;
    if (batch.size === 0) return;
    this.#pending = new Map();
    for (const [keyId, pending] of batch) {
      await this.orm.em
        .fork()
        .transactional((em) => writeUse(em, keyId, pending))
        .catch((error: unknown) => this.log.error('the use of a key could not be written', { keyId, error }));
    }
  }
}

/** One key's noted use: its row, its sightings, and a log entry for each one it never had. */
async function writeUse(em: EntityManager, keyId: string, pending: Pending): Promise<void> {
  await em.nativeUpdate(
    ApiKey,
    { id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: pending.at } }] },
    { lastUsedAt: pending.at, lastChannel: pending.channel, ...(pending.client ? { lastClient: pending.client } : {}) },
  );
  const fresh: { kind: 'address' | 'client'; value: string }[] = [];
  for (const [entry, at] of pending.seen) {
    const [kind, value] = entry.split('\n') as ['address' | 'client', string];
    const [row] = await reads(em)
      .insertInto('KeySighting')
      .values({ key: keyId, kind, value, firstSeenAt: at, lastSeenAt: at })
      .onConflict((oc) =>
        oc.columns(['key', 'kind', 'value']).doUpdateSet({
          lastSeenAt: sql`greatest(${sql.ref('excluded.last_seen_at')}, ${sql.ref('api_key_sightings.last_seen_at')})`,
        }),
      )
      .returning(sql<boolean>`xmax = 0`.as('inserted'))
      .execute();
    if (row?.inserted) fresh.push({ kind, value });
  }
  if (fresh.length === 0) return;
  const known = await reads(em)
    .selectFrom('KeySighting')
    .select(['kind', (eb) => eb.fn.countAll<string>().as('count')])
    .where('key', '=', keyId)
    .groupBy('kind')
    .execute();
  const count = (kind: string) => Number(known.find((k) => k.kind === kind)?.count ?? 0);
  const freshOf = (kind: string) => fresh.filter((f) => f.kind === kind).map((f) => f.value);
  /** Whether the key had been seen from an address (or by a client) before this batch. */
  const hadBefore = (kind: string) => count(kind) > freshOf(kind).length;
  const client = pending.client ?? undefined;
  const entries: { kind: SecurityEventKind; address?: string; client?: string }[] = !hadBefore('address')
    ? [{ kind: 'key.first_use', address: freshOf('address')[0], client }]
    : [
        ...freshOf('address').map((address) => ({ kind: 'key.new_address' as const, address, client })),
        ...(hadBefore('client') ? freshOf('client').map((c) => ({ kind: 'key.new_client' as const, client: c })) : []),
      ];
  const key = await em.findOne(ApiKey, { id: keyId }, { fields: ['name'] });
  for (const entry of entries)
    await recordSecurityEvent(em, {
      userId: pending.userId,
      keyId,
      keyName: key?.name,
      channel: pending.channel as Channel,
      ...entry,
    });
  for (const kind of new Set(fresh.map((f) => f.kind))) await forgetOldest(em, keyId, kind);
}

/** Keeps the REMEMBERED most recent sightings of one kind. */
async function forgetOldest(em: EntityManager, keyId: string, kind: string): Promise<void> {
  await reads(em)
    .deleteFrom('KeySighting')
    .where('key', '=', keyId)
    .where('kind', '=', kind)
    .where(
      'value',
      'not in',
      reads(em)
        .selectFrom('KeySighting')
        .select('value')
        .where('key', '=', keyId)
        .where('kind', '=', kind)
        .orderBy('lastSeenAt', 'desc')
        .limit(REMEMBERED),
    )
    .execute();
}

/** The last five addresses a key was used from, newest first, with when. */
export async function recentAddresses(
  em: EntityManager,
  keyIds: string[],
): Promise<Map<string, { address: string; at: Date }[]>> {
  const byKey = new Map<string, { address: string; at: Date }[]>();
  if (keyIds.length === 0) return byKey;
  const rows = await reads(em)
    .selectFrom('KeySighting')
    .select(['key as keyId', 'value as address', 'lastSeenAt as at'])
    .where('key', 'in', keyIds)
    .where('kind', '=', 'address')
    .orderBy('lastSeenAt', 'desc')
    .execute();
  for (const row of rows) {
    const list = byKey.get(row.keyId) ?? [];
    if (list.length < 5) list.push({ address: row.address, at: new Date(row.at) });
    byKey.set(row.keyId, list);
  }
  return byKey;
}
