/** Jobs' typed reads (src/db/reads.ts): a job as the API shows it, with its poster. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Kysely, sql } from 'kysely';
import { type DB, hotRead, iso, read, reads, changeTimesOf } from '../db/reads.js';
import { userSummary } from '../users/users.queries.js';
import type { Job } from './job.entity.js';

/**
 * Jobs (`j`) with their posters (`u`), in the columns `presentJob` shows; `expired` is decided by
 * PostgreSQL at full precision against `now`, the instant the list filters with.
 */
const jobsWithPosters = (db: Kysely<DB>, now: Date) =>
  db
    .selectFrom('Job as j')
    .innerJoin('User as u', 'u.id', 'j.poster')
    .select((eb) => [
      'j.id as id',
      'j.title as title',
      'j.company as company',
      'j.description as description',
      'j.location as location',
      'j.remotePolicy as remotePolicy',
      'j.employmentType as employmentType',
      'j.salaryMin as salaryMin',
      'j.salaryMax as salaryMax',
      'j.salaryCurrency as salaryCurrency',
      'j.skills as skills',
      'j.applyUrl as applyUrl',
      'j.status as status',
      iso('j.expiresAt').as('expiresAt'),
      eb('j.expiresAt', '<=', now).$castTo<boolean>().as('expired'), // PostgreSQL's booleans are true and false
      ...changeTimesOf('j'),
      userSummary(eb).as('poster'),
    ]);

/** One job, readable by anyone with the scope. */
export const jobById = hotRead(['jobId', 'now'], (db, v: { jobId: string; now: Date }) =>
  jobsWithPosters(db, v.now).where('j.id', '=', v.jobId),
);

export type JobFilters = {
  now: Date;
  openOnly: boolean;
  remotePolicy?: Job['remotePolicy'] | undefined;
  employmentType?: Job['employmentType'] | undefined;
  skill?: string | undefined;
  /** A part of the location, any case. */
  location?: string | undefined;
  posterId?: string | undefined;
  posterName?: string | undefined;
  /** Words to search for (websearch syntax). */
  q?: string | undefined;
  before?: string | undefined;
  limit: number;
};

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Jobs, newest first, narrowed by the filters given. Bound, not prepared: with words to search,
 * the planner needs to see them, as in search.
 */
export function jobs(em: EntityManager, f: JobFilters) {
  let query = jobsWithPosters(reads(em), f.now);
  if (f.openOnly) query = query.where('j.status', '=', 'open').where('j.expiresAt', '>', f.now);
  if (f.remotePolicy) query = query.where('j.remotePolicy', '=', f.remotePolicy);
  if (f.employmentType) query = query.where('j.employmentType', '=', f.employmentType);
  const { skill, q } = f;
  if (skill) query = query.where((eb) => eb('j.skills', '@>', eb.val([skill])));
  if (f.location) query = query.where('j.location', 'ilike', `%${escapeLike(f.location)}%`);
  if (f.posterId) query = query.where('j.poster', '=', f.posterId);
  if (f.posterName) query = query.where('u.username', '=', f.posterName);
  if (q) query = query.where((eb) => sql<boolean>`${eb.ref('j.search')} @@ websearch_to_tsquery('english', ${q})`);
  if (f.before) query = query.where('j.id', '<', f.before);
  return read(em, query.orderBy('j.id', 'desc').limit(f.limit));
}
