/** GitHub Insight's typed reads (src/db/reads.ts): what was synced for the caller's linked account. */
import { sql } from 'kysely';
import { hotRead, iso } from '../db/reads.js';
import type { GithubRepo } from './github.entity.js';

/** The account linked to the user, as the API shows it. */
export const accountOf = hotRead(['userId'], (db, v: { userId: string }) =>
  db
    .selectFrom('GithubAccount as a')
    .select([
      'a.id as id',
      'a.login as login',
      'a.name as name',
      'a.avatarUrl as avatarUrl',
      'a.htmlUrl as htmlUrl',
      'a.publicRepos as publicRepos',
      'a.followers as followers',
      'a.syncStatus as syncStatus',
      'a.syncMessage as syncMessage',
      iso('a.syncedAt').as('syncedAt'),
      iso('a.verifiedAt').as('verifiedAt'),
    ])
    .where('a.user', '=', v.userId),
);

/** A page of the account's repositories, most recently pushed first. */
export const repoPage = hotRead(
  ['accountId', 'limit', 'offset'],
  (db, v: { accountId: string; limit: number; offset: number }) =>
    db
      .selectFrom('GithubRepo as r')
      .select([
        'r.name as name',
        'r.fullName as fullName',
        'r.description as description',
        'r.htmlUrl as htmlUrl',
        'r.stars as stars',
        'r.forks as forks',
        'r.language as language',
        'r.topics as topics',
        iso('r.pushedAt').as('pushedAt'),
        'r.fork as fork',
        'r.archived as archived',
      ])
      .where('r.account', '=', v.accountId)
      .orderBy('r.pushedAt', (o) => o.desc().nullsLast())
      .orderBy('r.fullName', 'asc')
      .limit(v.limit)
      .offset(v.offset),
);

/** The figures of the account's repositories that its summaries add up. */
export const repoFigures = hotRead(['accountId'], (db, v: { accountId: string }) =>
  db
    .selectFrom('GithubRepo as r')
    .select((eb) => [
      'r.fork as fork',
      'r.stars as stars',
      // A JSON object's type is lost in Kysely's column types (a string-keyed record reads as a ColumnType).
      eb.ref('r.languages').$castTo<GithubRepo['languages']>().as('languages'),
    ])
    .where('r.account', '=', v.accountId),
);

/**
 * Commits per week summed over the account's repositories, newest week first, the last 52.
 * PostgreSQL adds them up, so only the weeks leave it, not each repository's 52.
 */
export const weeklyCommits = hotRead(['accountId'], (db, v: { accountId: string }) =>
  db
    .selectFrom('GithubRepo as r')
    .innerJoinLateral(
      (eb) =>
        sql<{ week: string; commits: number }>`jsonb_to_recordset(${eb.ref('r.weeklyCommits')})`.as<'w'>(
          sql`w(week text, commits int)`,
        ),
      (join) => join.onTrue(),
    )
    .select((eb) => ['w.week as week', eb.cast<number>(eb.fn.sum('w.commits'), 'integer').as('commits')])
    .where('r.account', '=', v.accountId)
    .groupBy('w.week')
    .orderBy('w.week', 'desc')
    .limit(52),
);
