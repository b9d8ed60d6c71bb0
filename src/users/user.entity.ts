import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { searchChangedTrigger, accessChangedTrigger } from '../db/triggers.js';

const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: uuidv7Key(),
    username: p.string().length(39).unique(),
    email: p.string().length(254).unique(),
    displayName: p.string().length(100),
    bio: p.text().default(''),
    skills: p.type(TextArrayType).default([]),
    /** The profile picture: an image this user uploaded (not a relation, to keep users independent of media). */
    avatarMediaId: p.uuid().nullable(),
    location: p.string().length(200).nullable(),
    website: p.string().length(500).nullable(),
    /** The linked GitHub account (GitHub Insight). */
    githubLogin: p.string().length(39).nullable(),
    /** scrypt hash (`scrypt$N$r$p$salt$hash`), null for an account that cannot sign in yet. */
    passwordHash: p.string().length(255).nullable().hidden(),
    isAdmin: p.boolean().default(false),
    /** Set by the operator CLI: a disabled account signs in nowhere and its keys are refused. */
    disabledAt: p.datetime().nullable(),
    /** Full-text search vector kept by PostgreSQL (migration ..._search); written as PostgreSQL prints it so the schema diff stays clean. */
    search: p
      .type('tsvector')
      .generated(
        `(((setweight(to_tsvector('simple'::regconfig, (((COALESCE(username, ''::character varying))::text || ' '::text) || (COALESCE(display_name, ''::character varying))::text)), 'A'::"char") || setweight(to_tsvector('english'::regconfig, shipyard_words(skills)), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(bio, ''::text)), 'C'::"char"))) stored`,
      )
      .lazy()
      .nullable()
      .hidden(),
    createdAt: madeAt(),
  },
  indexes: [
    { name: 'users_search_idx', properties: ['search'], type: 'gin' },
    /** Migration ..._media_access: whether an image is someone's profile picture. */
    { name: 'users_avatar_idx', properties: ['avatarMediaId'], where: 'avatar_media_id is not null' },
  ],
  triggers: [searchChangedTrigger('users', 'search'), accessChangedTrigger('users', 'id, disabled_at')],
});
export class User extends UserSchema.class {}
UserSchema.setClass(User);
