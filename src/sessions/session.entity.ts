import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { User } from '../users/user.entity.js';

/** A signed-in browser. Only the SHA-256 of the cookie's secret is stored. */
const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: uuidv7Key(),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    tokenHash: p.string().length(64).unique(),
    createdAt: madeAt(),
    expiresAt: p.datetime(),
    /** A sealed one-time message for the next page (src/sessions/flash.ts), or null. */
    flash: p.text().nullable(),
  },
  indexes: [{ name: 'sessions_user_idx', properties: ['user'] }],
});
export class Session extends SessionSchema.class {}
SessionSchema.setClass(Session);
