import { defineEntity, p } from '@mikro-orm/postgresql';
import { ApiKey } from './api-key.entity.js';

/**
 * An address or a client a key was used from, with when it was first and last seen: the keys
 * page shows the last five addresses, and a key seen from one it never used before is marked in
 * the security log. Written in batches (src/keys/key-use.ts), never on the request path.
 */
const KeySightingSchema = defineEntity({
  name: 'KeySighting',
  tableName: 'api_key_sightings',
  properties: {
    key: () => p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    /** address or client. */
    kind: p.string().length(10).primary(),
    value: p.string().length(200).primary(),
    firstSeenAt: p.datetime(),
    lastSeenAt: p.datetime(),
  },
});
export class KeySighting extends KeySightingSchema.class {}
KeySightingSchema.setClass(KeySighting);
