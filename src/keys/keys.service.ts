/**
 * API keys: created by a signed-in person (web, later) or the operator CLI; never over the API.
 */
import { lineProblem } from '../kernel/text.js';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from './api-key.entity.js';
import { User } from '../users/user.entity.js';
import { checkToken, generateToken, hashToken } from './tokens.js';
import { isScopeId, SCOPE_IDS, type ScopeId } from '../kernel/scopes.js';
import { badRequest, conflict, invalidToken, notFound } from '../kernel/problem.js';
import type { Actor } from '../kernel/actor.js';
import { MAX_KEY_DAYS } from '../kernel/limits.js';
import { keyEvents, type CachedKey, type KeyCache } from './key-cache.js';
import { recordSecurityEvent, type Channel, type Origin } from '../security-log/security-log.service.js';

/** The most keys one account may have active (neither revoked nor expired): minting keys does not multiply a budget. */
export const MAX_ACTIVE_KEYS = 50;
/** Who made or changed a key, and through what: the security log's entry says so. */
export type KeyOrigin = Origin & { channel: Extract<Channel, 'web' | 'cli' | 'oauth'> };
/** Made or changed on the server's host: the operator CLI (and the tests' factories). */
const ON_THE_HOST: KeyOrigin = { channel: 'cli' };

/** An expiry is required: a number of days, or a moment at most MAX_KEY_DAYS ahead. */
export type NewKey = {
  userId: string;
  name: string;
  scopes: string[];
  /** The OAuth client the key is handed to, when it is made through OAuth sign-in. */
  oauthClientId?: string;
  /** The longest it may last, in days (the operator's KEY_MAX_DAYS; MAX_KEY_DAYS at most). */
  maxDays?: number;
  /** Where it is made: on the server's host (the CLI) unless said. */
  origin?: KeyOrigin;
} & ({ expiresInDays: number } | { expiresAt: Date });
export type CreatedKey = { key: ApiKey; token: string };

function parseScopes(scopes: string[]): ScopeId[] {
  const unknown = scopes.filter((s) => !isScopeId(s));
  if (unknown.length)
    throw badRequest(
      `Unknown scope ${unknown.map((s) => `'${s}'`).join(', ')}; the scopes are ${SCOPE_IDS.join(', ')}.`,
    );
  if (scopes.length === 0) throw badRequest('A key needs at least one scope.');
  return [...new Set(scopes)].sort() as ScopeId[];
}

/**
 * The last day (UTC, YYYY-MM-DD) a key made now may expire on: `maxDays` from today. A key given a
 * date lasts until the end of that day, so the date picker's maximum and this rule agree.
 */
export function lastExpiryDay(now = Date.now(), maxDays = MAX_KEY_DAYS): string {
  return new Date(now + maxDays * 86_400_000).toISOString().slice(0, 10);
}

/** Why a key cannot be made to expire as `expiry` asks (a date, or a number of days); undefined when it can. */
export function expiryProblem(
  expiry: { expiresAt: Date; maxDays?: number } | { expiresInDays: number; maxDays?: number },
  now = Date.now(),
): string | undefined {
  const maxDays = Math.min(expiry.maxDays ?? MAX_KEY_DAYS, MAX_KEY_DAYS);
  if ('expiresAt' in expiry) {
    const at = expiry.expiresAt.getTime();
    const last = lastExpiryDay(now, maxDays);
    if (!Number.isFinite(at) || at <= now || at > Date.parse(`${last}T23:59:59.999Z`))
      return `A key's date is after today and ${last} at the latest (${maxDays} days from today).`;
    return undefined;
  }
  const days = expiry.expiresInDays;
  if (!Number.isInteger(days) || days < 1 || days > maxDays)
    return `A key expires in a whole number of days from 1 to ${maxDays}${Number.isFinite(days) ? `, not ${days}` : ''}.`;
  return undefined;
}

function expiryOf(input: NewKey, now = Date.now()): Date {
  const problem = expiryProblem(input, now);
  if (problem) throw badRequest(problem);
  return 'expiresAt' in input ? input.expiresAt : new Date(now + input.expiresInDays * 86_400_000);
}

/** A new key, recorded in its owner's security log in the same transaction. */
export async function createKey(em: EntityManager, input: NewKey): Promise<CreatedKey> {
  return em.transactional(async (tem) => {
    const created = await insertKey(tem, input);
    await recordSecurityEvent(tem, {
      userId: input.userId,
      kind: 'key.created',
      keyId: created.key.id,
      keyName: created.key.name,
      ...(input.origin ?? ON_THE_HOST),
    });
    return created;
  });
}

async function insertKey(em: EntityManager, input: NewKey): Promise<CreatedKey> {
  const scopes = parseScopes(input.scopes);
  const expiresAt = expiryOf(input);
  const name = input.name.trim();
  const nameProblem = lineProblem(name);
  if (nameProblem) throw badRequest(`A key's name needs ${nameProblem}.`);
  if (name.length > 100) throw badRequest('A key needs a name of 1 to 100 characters.');
  const token = generateToken();
  const key = await em.transactional(async (tem) => {
    // The account's row is the lock: two creates at once cannot both take the last place.
    await tem.findOneOrFail(User, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['id'] });
    const active = await tem.count(ApiKey, { user: input.userId, revokedAt: null, expiresAt: { $gt: new Date() } });
    if (active >= MAX_ACTIVE_KEYS) {
      throw conflict(
        `This account has ${active} active API keys, the most it may have. Revoke one it no longer uses (Settings → Manage API keys), then create this one.`,
      ).because('key-limit-reached');
    }
    const created = tem.create(ApiKey, {
      user: tem.getReference(User, input.userId),
      name,
      tokenHash: hashToken(token),
      last4: token.slice(-4),
      scopes,
      expiresAt,
      oauthClientId: input.oauthClientId ?? null,
    });
    await tem.flush();
    return created;
  });
  return { key, token };
}

export async function listKeys(em: EntityManager, userId: string): Promise<ApiKey[]> {
  return em.find(ApiKey, { user: userId }, { orderBy: { id: 'desc' } });
}

/** Revokes a key; with ownerId (the web screen), only that person's own key (another's is a 404). */
export async function revokeKey(
  em: EntityManager,
  id: string,
  ownerId?: string,
  origin: KeyOrigin = ON_THE_HOST,
): Promise<ApiKey> {
  const key = await em.findOne(ApiKey, ownerId ? { id, user: ownerId } : { id });
  if (!key) throw notFound(`No API key with id ${id}.`);
  if (!key.revokedAt) {
    key.revokedAt = new Date();
    await em.transactional(async (tem) => {
      await tem.flush();
      await recordSecurityEvent(tem, {
        userId: key.user.id,
        kind: 'key.revoked',
        keyId: key.id,
        keyName: key.name,
        ...origin,
      });
    });
  }
  keyEvents.emit('revoked', key.id);
  return key;
}

/** How long a regenerated key's old secret keeps working, in hours: at once, or after a short overlap. */
export const REGENERATE_OVERLAP_HOURS = [0, 1, 24] as const;
export type RegenerateOverlap = (typeof REGENERATE_OVERLAP_HOURS)[number];

/** How many days a key regenerated from `key` lasts: as long as `key` was made to, within 1 and `maxDays`. */
export function regeneratedLifetimeDays(key: ApiKey, maxDays = MAX_KEY_DAYS): number {
  const days = Math.round((key.expiresAt.getTime() - key.createdAt.getTime()) / 86_400_000);
  return Math.min(Math.max(days, 1), Math.min(maxDays, MAX_KEY_DAYS));
}

/** Why a key cannot be regenerated, in words for its owner; undefined when it can. */
export function regenerateRefusal(key: ApiKey, now = new Date()): string | undefined {
  const status = keyStatus(key, now);
  if (status !== 'active')
    return `The key "${key.name}" is ${status}: there is no secret to replace. Generate a new key instead.`;
  if (key.replacedAt)
    return `The key "${key.name}" was regenerated already: its new key took its place, and this one stops working by itself.`;
  if (key.oauthClientId)
    return `The key "${key.name}" was handed to an app through OAuth sign-in: sign in from that app again for a new one.`;
  return undefined;
}

/**
 * A new secret for one of a person's own active keys: a key with the same name and scopes that
 * lasts as long as the old one was made to (at most `maxDays`), shown once. The old secret stops
 * at once, or `overlapHours` from now (it then expires then, unless it was to expire sooner), so
 * that a deployment can switch over. A key handed to an app through OAuth sign-in is renewed by
 * signing in from the app again instead.
 */
export async function regenerateKey(
  em: EntityManager,
  input: { id: string; ownerId: string; overlapHours: RegenerateOverlap; maxDays?: number; origin: KeyOrigin },
): Promise<CreatedKey & { previous: ApiKey }> {
  const result = await em.transactional(async (tem) => {
    const previous = await tem.findOne(
      ApiKey,
      { id: input.id, user: input.ownerId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!previous) throw notFound(`No API key with id ${input.id}.`);
    const refused = regenerateRefusal(previous);
    if (refused) throw conflict(refused).because('key-not-regenerable');
    const now = Date.now();
    const expiresInDays = regeneratedLifetimeDays(previous, input.maxDays);
    previous.replacedAt = new Date(now);
    if (input.overlapHours === 0) previous.revokedAt = new Date(now);
    else previous.expiresAt = new Date(Math.min(previous.expiresAt.getTime(), now + input.overlapHours * 3_600_000));
    await tem.flush();
    const created = await insertKey(tem, {
      userId: input.ownerId,
      name: previous.name,
      scopes: previous.scopes,
      expiresInDays,
      maxDays: input.maxDays,
      origin: input.origin,
    });
    // One entry, on the key that was replaced: its new secret is the same key to its owner.
    await recordSecurityEvent(tem, {
      userId: input.ownerId,
      kind: 'key.regenerated',
      keyId: previous.id,
      keyName: previous.name,
      ...input.origin,
    });
    return { ...created, previous };
  });
  if (input.overlapHours === 0) keyEvents.emit('revoked', result.previous.id);
  return result;
}

export function keyStatus(key: ApiKey, now = new Date()): 'active' | 'expired' | 'revoked' {
  if (key.revokedAt) return 'revoked';
  return key.expiresAt <= now ? 'expired' : 'active';
}

async function readKey(
  em: EntityManager,
  tokenHash: string,
  cache: KeyCache | undefined,
): Promise<CachedKey | undefined> {
  const generation = cache?.generation ?? 0;
  // A fork of its own: the account is read in part (whether it is disabled), and a partial
  // entity must not stand in for the whole one in the request's own identity map.
  const row = await em.fork().findOne(ApiKey, { tokenHash }, { populate: ['user'], fields: ['*', 'user.disabledAt'] });
  if (!row) return undefined;
  const key: CachedKey = {
    id: row.id,
    userId: row.user.id,
    userDisabled: Boolean(row.user.disabledAt),
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt ?? null,
    name: row.name,
    viaOAuth: Boolean(row.oauthClientId),
  };
  cache?.set(tokenHash, key, generation);
  return key;
}

/**
 * From a presented token to an Actor, or a 401. The shape and checksum are checked before any
 * database read; with a cache, a key seen in the last few seconds is not read again (see
 * key-cache.ts for the revocation bound). The token is never logged.
 */
export async function authenticateToken(
  em: EntityManager,
  token: string,
  cache?: KeyCache,
  keysPage?: string,
): Promise<Actor> {
  const check = checkToken(token);
  if (!check.ok) {
    throw invalidToken(
      check.reason === 'checksum'
        ? "The API key's checksum does not match: it was mistyped or truncated."
        : 'The API key is malformed: a key is shipyard_pat_ followed by 38 letters and digits.',
    );
  }
  const tokenHash = hashToken(token);
  const key = cache?.get(tokenHash) ?? (await readKey(em, tokenHash, cache));
  // A key that stopped working says where to make the next one (PUBLIC_URL's Settings → Manage API keys).
  const newKey = keysPage ? ` Make a new key under Settings → Manage API keys: ${keysPage}` : '';
  if (!key) throw invalidToken(`The API key is not known: check that it was copied whole.${newKey}`);
  // A key an app was given through OAuth is renewed by signing in again, from the app.
  const wayOut = key.viaOAuth ? ' It was given to this app through OAuth sign-in: sign in again from the app.' : newKey;
  const now = new Date();
  if (key.revokedAt) throw invalidToken(`The API key has been revoked.${wayOut}`);
  // No new key helps: only the service's operator enables an account again.
  if (key.userDisabled)
    throw invalidToken(
      "The account this API key belongs to is disabled, so none of its keys work. Ask the service's operator to enable it; a new key will not help.",
    );
  if (key.expiresAt <= now) throw invalidToken(`The API key expired at ${key.expiresAt.toISOString()}.${wayOut}`);
  return {
    userId: key.userId,
    via: 'key',
    keyId: key.id,
    keyName: key.name,
    scopes: key.scopes.filter(isScopeId),
    expiresAt: key.expiresAt,
  };
}
