import { defineEntity, p } from '@mikro-orm/postgresql';
import { madeAt } from '../db/columns.js';

/**
 * An OAuth client registered through Dynamic Client Registration (RFC 7591). Every client is
 * public: it proves itself with PKCE, and no client secret is issued or kept.
 */
const OAuthClientSchema = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_clients',
  properties: {
    /** The client_id handed out at registration. */
    id: p.uuid().primary(),
    name: p.string().length(100),
    redirectUris: p.json<string[]>(),
    /** The client's home page, when it gave one (shown on the consent screen). */
    clientUri: p.string().length(2000).nullable(),
    createdAt: madeAt(),
    /** When someone last approved it: a registration nobody used for long is swept. */
    lastUsedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'oauth_clients_created_at_idx', properties: ['createdAt'] }],
});
export class OAuthClient extends OAuthClientSchema.class {}
OAuthClientSchema.setClass(OAuthClient);
