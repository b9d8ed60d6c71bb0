import type { ScopeId } from './scopes.js';
import { isUuid } from './ids.js';

/** Who is calling. An API key carries scopes and never any account role. */
export type Actor = {
  userId: string;
  via: 'key' | 'session' | 'anonymous';
  keyId?: string;
  /** The key's name, for the security log. */
  keyName?: string;
  scopes: readonly ScopeId[];
  expiresAt?: Date;
};

/** The caller of a public operation (the spec document): no user, no scopes. */
export const ANONYMOUS: Actor = Object.freeze({ userId: '', via: 'anonymous', scopes: [] });

/** The caller's user id, or null for a caller with none (anonymous): what a typed read compares with. */
export const actorId = (actor: Actor): string | null => (isUuid(actor.userId) ? actor.userId : null);

/** What a delete removed, named as it was (its name or title): the security log's entry names it. */
export type Removed = { name: string };
