import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';
import { accessChangedTrigger } from '../db/triggers.js';

const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: uuidv7Key(),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    name: p.string().length(100),
    /** SHA-256 of the whole token, hex. The token itself is never stored. */
    tokenHash: p.string().length(64).unique(),
    /** The last 4 characters of the token, for display. */
    last4: p.string().length(4),
    scopes: p.type(TextArrayType),
    expiresAt: p.datetime(),
    createdAt: madeAt(),
    lastUsedAt: p.datetime().nullable(),
    /** Through what it was last used: rest or mcp. */
    lastChannel: p.string().length(10).nullable(),
    /** The client it was last used by: its User-Agent, or for MCP its name and version. */
    lastClient: p.string().length(200).nullable(),
    revokedAt: p.datetime().nullable(),
    /** When the key was regenerated: a new key took its place, and this one stops at its expiry. */
    replacedAt: p.datetime().nullable(),
    /** The OAuth client the key was handed to, when it was made through OAuth sign-in. */
    oauthClientId: p.string().length(2000).nullable(),
  },
  indexes: [{ name: 'api_keys_user_idx', properties: ['user'] }],
  triggers: [accessChangedTrigger('api_keys', 'id, token_hash, revoked_at, expires_at, scopes, user_id')],
});
export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
