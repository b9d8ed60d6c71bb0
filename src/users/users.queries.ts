/** Users' typed reads (src/db/reads.ts): a profile as the API shows it, never the email or the password hash. */
import type { ExpressionBuilder, Kysely } from 'kysely';
import { jsonBuildObject } from 'kysely/helpers/postgres';
import { type DB, hotRead, iso } from '../db/reads.js';

const profiles = (db: Kysely<DB>) =>
  db
    .selectFrom('User as u')
    .select([
      'u.id as id',
      'u.username as username',
      'u.displayName as displayName',
      'u.bio as bio',
      'u.skills as skills',
      'u.avatarMediaId as avatarMediaId',
      'u.location as location',
      'u.website as website',
      'u.githubLogin as githubLogin',
      iso('u.createdAt').as('createdAt'),
    ]);

export const profileById = hotRead(['id'], (db, v: { id: string }) => profiles(db).where('u.id', '=', v.id));
export const profileByUsername = hotRead(['username'], (db, v: { username: string }) =>
  profiles(db).where('u.username', '=', v.username),
);

/** A user `u` as the API shows one beside what they made (`UserSummary`). */
export const userSummary = (eb: ExpressionBuilder<DB & { u: DB['User'] }, 'u'>) =>
  jsonBuildObject({ id: eb.ref('u.id'), username: eb.ref('u.username'), displayName: eb.ref('u.displayName') });
