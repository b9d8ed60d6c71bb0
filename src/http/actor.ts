import type { ScopeId } from '../keys/scopes.js';

/** Who is calling. An API key carries scopes and never any account role. */
export type Actor = {
  userId: string;
  via: 'key' | 'session' | 'anonymous';
  keyId?: string;
  scopes: readonly ScopeId[];
  expiresAt?: Date;
};

/** The caller of a public operation (the spec document): no user, no scopes. */
export const ANONYMOUS: Actor = Object.freeze({ userId: '', via: 'anonymous', scopes: [] });
