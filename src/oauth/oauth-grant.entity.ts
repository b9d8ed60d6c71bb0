import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';

/**
 * One sign-in through OAuth, from the client's authorization request to the key it was given:
 * asked (client, redirect, PKCE challenge, resource, scopes), then approved by a signed-in person
 * (the scopes they ticked, the expiry they chose, a one-time code), then exchanged once for an
 * ordinary API key. Kept a day, so that a code used twice still finds the key to revoke.
 */
const OAuthGrantSchema = defineEntity({
  name: 'OAuthGrant',
  tableName: 'oauth_grants',
  properties: {
    id: uuidv7Key(),
    /** A registered client's id, or the URL of its metadata document. */
    clientId: p.string().length(2000),
    clientName: p.string().length(100),
    redirectUri: p.string().length(2000),
    codeChallenge: p.string().length(128),
    /** The resource (RFC 8707) the key is for: this server's MCP endpoint or API. */
    resource: p.string().length(2000),
    state: p.string().length(1000).nullable(),
    requestedScopes: p.type(TextArrayType),
    /**
     * SHA-256 of the browser-binding cookie of the browser that started the request, hex: only
     * that browser may approve or deny it (RFC 9700 §4.7).
     */
    browserHash: p.string().length(64).nullable(),
    /** Until when the person may approve or deny it. */
    expiresAt: p.datetime(),
    user: () => p.manyToOne(User).deleteRule('cascade').nullable(),
    grantedScopes: p.type(TextArrayType).nullable(),
    keyExpiresAt: p.datetime().nullable(),
    /** SHA-256 of the one-time code, hex. The code itself is never stored. */
    codeHash: p.string().length(64).unique().nullable(),
    codeExpiresAt: p.datetime().nullable(),
    usedAt: p.datetime().nullable(),
    /**
     * The key the exchange made. Not a foreign key: a grant is a day's record, and an operator may
     * truncate api_keys (the key cache hears of it) without first clearing grants.
     */
    keyId: p.uuid().nullable(),
    createdAt: madeAt(),
  },
  indexes: [{ name: 'oauth_grants_created_at_idx', properties: ['createdAt'] }],
});
export class OAuthGrant extends OAuthGrantSchema.class {}
OAuthGrantSchema.setClass(OAuthGrant);
