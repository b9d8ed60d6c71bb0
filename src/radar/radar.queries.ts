/** The opportunity radar's typed reads (src/db/reads.ts): the caller's signals, and the candidates scored against them. */
import { hotRead, iso } from '../db/reads.js';
import type { GithubRepo } from '../github/github.entity.js';
import { isMember } from '../access/access.queries.js';

/** How many of the newest candidates of each kind are scored. */
const CANDIDATES = 500;

/**
 * The caller's skills, and each of their synced repositories' language bytes (no repository: one
 * row of nulls). Only a proven GitHub login counts: anyone can link someone else's.
 */
export const signalRows = hotRead(['userId'], (db, v: { userId: string | null }) =>
  db
    .selectFrom('User as u')
    .leftJoin('GithubAccount as a', (join) => join.onRef('a.user', '=', 'u.id').on('a.verifiedAt', 'is not', null))
    .leftJoin('GithubRepo as r', 'r.account', 'a.id')
    .select((eb) => [
      'u.skills as skills',
      'r.fork as fork',
      // A JSON object's type is lost in Kysely's column types (a string-keyed record reads as a ColumnType).
      eb.ref('r.languages').$castTo<GithubRepo['languages'] | null>().as('languages'),
    ])
    .where('u.id', '=', v.userId),
);

/** The newest open jobs, not the caller's, that want one of `terms`. */
export const jobCandidates = hotRead(
  ['now', 'userId', 'terms'],
  (db, v: { now: Date; userId: string | null; terms: string[] }) =>
    db
      .selectFrom('Job as j')
      .select([
        'j.id as id',
        'j.title as title',
        'j.company as company',
        'j.skills as skills',
        'j.remotePolicy as remotePolicy',
        'j.salaryMin as salaryMin',
        iso('j.createdAt').as('createdAt'),
      ])
      .where('j.status', '=', 'open')
      .where('j.expiresAt', '>', v.now)
      .where('j.poster', '<>', v.userId)
      .where((eb) => eb('j.skills', '&&', eb.val(v.terms)))
      .orderBy('j.id', 'desc')
      .limit(CANDIDATES),
);

/** The newest public projects looking for collaborators, neither the caller's nor joined by them, that want one of `terms`. */
export const projectCandidates = hotRead(['userId', 'terms'], (db, v: { userId: string | null; terms: string[] }) =>
  db
    .selectFrom('Project as p')
    .select([
      'p.id as id',
      'p.name as name',
      'p.tagline as tagline',
      'p.stage as stage',
      'p.wantedSkills as wantedSkills',
      iso('p.createdAt').as('createdAt'),
    ])
    .where('p.visibility', '=', 'public')
    .where('p.lookingForCollaborators', '=', true)
    .where('p.owner', '<>', v.userId)
    .where((eb) => eb('p.wantedSkills', '&&', eb.val(v.terms)))
    .where((eb) => eb.not(isMember(eb, v.userId)))
    .orderBy('p.id', 'desc')
    .limit(CANDIDATES),
);
