/**
 * The account's security log: what was done with its keys and its sign-in, by whom (which key,
 * through which channel and client) and from where. Each entry is written where the thing it
 * records happens, in the same transaction when there is one, so that the log cannot claim what
 * did not happen. Entries name keys and resources; no secret and no request body is ever stored.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../kernel/ids.js';
import type { Actor } from '../kernel/actor.js';
import { randomInt } from 'node:crypto';
import { UUID, uuidv7 } from 'uuidv7';
import { SecurityEvent } from './security-event.entity.js';
import { insertSecurityEvents, keysExpiredUnlogged, type SecurityRow, sweepLock } from './security-log.queries.js';
import { sharedWrites } from '../db/shared-writes.js';

export const SECURITY_EVENT_KINDS = [
  'key.created',
  'key.regenerated',
  'key.revoked',
  'key.expired',
  'key.first_use',
  'key.new_address',
  'key.new_client',
  'key.write',
  'signin',
  'signin.failed',
  'signout',
  'password.changed',
  'github.linked',
] as const;
export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];
export const isSecurityEventKind = (v: unknown): v is SecurityEventKind =>
  (SECURITY_EVENT_KINDS as readonly unknown[]).includes(v);

/** Kinds that mark use the owner may not expect: shown as such on the page. */
export const UNFAMILIAR_KINDS: ReadonlySet<SecurityEventKind> = new Set(['key.new_address', 'key.new_client']);

export type Channel = 'web' | 'cli' | 'oauth' | 'rest' | 'mcp';

/** Where a request came from: its address and client, as the adapter that served it knows them. */
export type Origin = { address?: string | null; client?: string | null };

export type NewSecurityEvent = Origin & {
  userId: string;
  kind: SecurityEventKind;
  keyId?: string | null;
  keyName?: string | null;
  channel?: Channel | null;
  operation?: string | null;
  resource?: string | null;
  /** What the write changed, named as it was then. */
  resourceName?: string | null;
  /** The trace the write ran in, when traced. */
  traceId?: string | null;
};

const PRINTABLE_ASCII = /^[ -~]*$/;

/**
 * Text as long as its column allows (whole code points), without control or format characters
 * (a client may send anything: bidi overrides and zero-width characters would disguise it) and
 * without lone surrogates (no character at all, and refused in the JSON the entries are written as).
 */
export const columnText = (value: string | null | undefined, max: number): string | null => {
  if (value === undefined || value === null) return null;
  // Printable ASCII (most addresses and User-Agents): nothing to replace, one code unit per code point.
  if (PRINTABLE_ASCII.test(value)) return value.trim().slice(0, max) || null;
  const clean = value.replace(/[\p{Cc}\p{Cf}\p{Cs}]/gu, ' ').trim();
  return clean ? [...clean].slice(0, max).join('') : null;
};

/** The row as it is inserted: each text cut to its column. */
function securityRow(event: NewSecurityEvent): SecurityRow {
  return {
    id: uuidv7(),
    userId: event.userId,
    kind: event.kind,
    occurredAt: new Date(),
    keyId: event.keyId ?? null,
    keyName: columnText(event.keyName, 100),
    channel: event.channel ?? null,
    client: columnText(event.client, 200),
    address: columnText(event.address, 64),
    operation: columnText(event.operation, 60),
    resource: columnText(event.resource, 300),
    resourceName: columnText(event.resourceName, 200),
    traceId: event.traceId && /^[0-9a-f]{32}$/.test(event.traceId) ? event.traceId : null,
  };
}

/**
 * Writes one entry: inside the caller's transaction when `em` is a transaction's; otherwise in a
 * statement it shares with the same account's entries written at the same moment (every write
 * made with a key adds one after its change committed), resolved once it is written.
 */
export async function recordSecurityEvent(em: EntityManager, event: NewSecurityEvent): Promise<void> {
  const row = securityRow(event);
  await (em.isInTransaction() ? insertSecurityEvents(em, [row]) : insertShared(em, row));
}
const insertShared = sharedWrites<SecurityRow>(insertSecurityEvents, (row) => row.userId);

export type SecurityLogFilter = { keyId?: string; kind?: SecurityEventKind; before?: string };

/** A page of the owner's log, newest first; `before` (an entry's id) continues after it. */
export async function listSecurityEvents(
  em: EntityManager,
  userId: string,
  filter: SecurityLogFilter,
  limit: number,
): Promise<{ items: SecurityEvent[]; next: string | null }> {
  const where: Record<string, unknown> = { user: userId };
  if (filter.keyId && isUuid(filter.keyId)) where.keyId = filter.keyId;
  if (filter.kind) where.kind = filter.kind;
  if (filter.before && isUuid(filter.before)) where.id = { $lt: filter.before };
  const rows = await em.find(SecurityEvent, where, { orderBy: { id: 'desc' }, limit: limit + 1 });
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? items.at(-1)!.id : null };
}

/** The whole log, oldest first, a page of rows in memory at a time (the JSON Lines download). */
export async function* everySecurityEvent(em: EntityManager, userId: string): AsyncGenerator<SecurityEvent> {
  let after: string | undefined;
  for (;;) {
    const rows = await em.fork().find(SecurityEvent, after ? { user: userId, id: { $gt: after } } : { user: userId }, {
      orderBy: { id: 'asc' },
      limit: 500,
    });
    yield* rows;
    if (rows.length < 500) return;
    after = rows.at(-1)!.id;
  }
}

/**
 * Housekeeping: an entry for each key that reached its expiry (once; a key revoked before its
 * expiry has its revocation instead), and entries older than `keepDays` removed. Returns how many
 * rows changed.
 */
export async function sweepSecurityLog(em: EntityManager, keepDays: number, now = new Date()): Promise<number> {
  const since = new Date(now.getTime() - keepDays * 86_400_000);
  return em.transactional(async (tem) => {
    // One instance sweeps at a time (every instance runs the hourly sweep): an expiry is logged once.
    if (!(await sweepLock(tem))) return 0;
    const expired = await keysExpiredUnlogged(tem, since, now);
    // Each id sorts its entry at the expiry, where the page shows it, not at the sweep that noticed it.
    await insertSecurityEvents(
      tem,
      expired.map((key) => {
        const at = new Date(key.expiresAt);
        return {
          ...securityRow({ userId: key.userId, kind: 'key.expired', keyId: key.id, keyName: key.name }),
          id: idAt(at),
          occurredAt: at,
        };
      }),
    );
    // By id, which is time-ordered: the primary key's index finds them.
    const removed = await tem.nativeDelete(SecurityEvent, { id: { $lt: idAt(since, 0) } });
    return expired.length + removed;
  });
}

/** A time-ordered id for a moment in the past (the lowest of that millisecond with `random` 0). */
const idAt = (at: Date, random?: 0): string =>
  random === 0
    ? UUID.fromFieldsV7(at.getTime(), 0, 0, 0).toString()
    : UUID.fromFieldsV7(at.getTime(), randomInt(0x1000), randomInt(0x40000000), randomInt(0x100000000)).toString();

/** A write made with a key: which key, through what, from where, and what it changed. */
export async function recordKeyWrite(
  em: EntityManager,
  actor: Actor,
  write: Origin & {
    channel: Extract<Channel, 'rest' | 'mcp'>;
    operation: string;
    resource: string;
    resourceName?: string | null;
    traceId?: string;
  },
): Promise<void> {
  if (!actor.keyId) return;
  await recordSecurityEvent(em, {
    userId: actor.userId,
    kind: 'key.write',
    keyId: actor.keyId,
    keyName: actor.keyName,
    ...write,
  });
}

/**
 * What a write's answer names: its name or title (a project, a milestone, a post, a job), or the
 * user it is about (a member), or a webhook's description or address. Undefined for what has none.
 */
export function resourceNameOf(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  for (const field of ['name', 'title']) if (typeof v[field] === 'string' && v[field]) return v[field] as string;
  const user = v.user as { username?: unknown } | undefined;
  if (typeof user?.username === 'string') return `@${user.username}`;
  if (typeof v.url === 'string') return typeof v.description === 'string' && v.description ? v.description : v.url;
  return undefined;
}
