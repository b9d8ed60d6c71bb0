/**
 * Job listings. Only the poster edits, closes or deletes. The default listing shows open jobs
 * that have not expired; everything stays readable by id.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { rowById } from '../db/reads.js';
import type { JobCreate, JobUpdate, Job as JobDto } from '../../codegen/generated/api/types.gen.js';
import { Job } from './job.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor, Removed } from '../kernel/actor.js';
import { badRequest, forbidden, notFound } from '../kernel/problem.js';
import { cursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { normaliseTags } from '../kernel/tags.js';
import { presentJob } from './jobs.presenter.js';
import { jobById, jobs } from './jobs.queries.js';
import { wordCount } from '../search/search.queries.js';

const DAY = 86_400_000;
const DEFAULT_JOB_DAYS = 30;
const MAX_JOB_DAYS = 365;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

type Salary = { salaryMin: number | null; salaryMax: number | null; salaryCurrency: string | null };

/** All or nothing, min ≤ max, a real ISO 4217 code. */
function checkSalary(s: Salary): void {
  const given = [s.salaryMin, s.salaryMax, s.salaryCurrency].filter((v) => v !== null).length;
  if (given !== 0 && given !== 3) {
    throw badRequest('A salary needs salaryMin, salaryMax and salaryCurrency together (or none of them).', [
      { path: '/body/salaryMin', message: 'salaryMin, salaryMax and salaryCurrency go together' },
    ]);
  }
  if (given === 3 && s.salaryMin! > s.salaryMax!) {
    throw badRequest(`salaryMin (${s.salaryMin}) is more than salaryMax (${s.salaryMax}).`, [
      { path: '/body/salaryMin', message: 'must be ≤ salaryMax' },
    ]);
  }
  if (s.salaryCurrency !== null && !CURRENCIES.has(s.salaryCurrency)) {
    throw badRequest(`'${s.salaryCurrency}' is not an ISO 4217 currency code.`, [
      { path: '/body/salaryCurrency', message: 'unknown currency' },
    ]);
  }
}

function checkExpiry(expiresAt: string | undefined, now = Date.now()): Date {
  if (expiresAt === undefined) return new Date(now + DEFAULT_JOB_DAYS * DAY);
  const at = new Date(expiresAt);
  if (at.getTime() <= now || at.getTime() > now + MAX_JOB_DAYS * DAY) {
    throw badRequest(`expiresAt must be in the future and at most ${MAX_JOB_DAYS} days ahead.`, [
      { path: '/body/expiresAt', message: 'out of range' },
    ]);
  }
  return at;
}

async function getJob(em: EntityManager, jobId: string): Promise<Job> {
  const job = await em.findOne(Job, { id: jobId }, { populate: ['poster'] });
  if (!job) throw notFound(`No job with id ${jobId}.`);
  return job;
}

/** The poster only. */
async function assertCanManageJob(em: EntityManager, actor: Actor, jobId: string): Promise<Job> {
  const job = await getJob(em, jobId);
  if (job.poster.id !== actor.userId)
    throw forbidden(`Only the poster (${job.poster.username}) may change job ${jobId}.`).because('not-poster');
  return job;
}

export async function createJob(em: EntityManager, actor: Actor, input: JobCreate): Promise<JobDto> {
  const salary = {
    salaryMin: input.salaryMin ?? null,
    salaryMax: input.salaryMax ?? null,
    salaryCurrency: input.salaryCurrency ?? null,
  };
  checkSalary(salary);
  const job = em.create(Job, {
    poster: em.getReference(User, actor.userId),
    title: input.title.trim(),
    company: input.company.trim(),
    description: input.description,
    location: input.location?.trim() || null,
    remotePolicy: input.remotePolicy,
    employmentType: input.employmentType,
    ...salary,
    skills: normaliseTags(input.skills),
    applyUrl: input.applyUrl,
    expiresAt: checkExpiry(input.expiresAt),
  });
  await em.flush();
  await em.populate(job, ['poster']);
  return presentJob(job);
}

export async function updateJob(em: EntityManager, actor: Actor, jobId: string, input: JobUpdate): Promise<JobDto> {
  const job = await assertCanManageJob(em, actor, jobId);
  if (input.salaryMin !== undefined || input.salaryMax !== undefined || input.salaryCurrency !== undefined) {
    const salary = {
      salaryMin: input.salaryMin ?? null,
      salaryMax: input.salaryMax ?? null,
      salaryCurrency: input.salaryCurrency ?? null,
    };
    checkSalary(salary);
    Object.assign(job, salary);
  }
  if (input.title !== undefined) job.title = input.title.trim();
  if (input.company !== undefined) job.company = input.company.trim();
  if (input.description !== undefined) job.description = input.description;
  if (input.location !== undefined) job.location = input.location?.trim() || null;
  if (input.remotePolicy !== undefined) job.remotePolicy = input.remotePolicy;
  if (input.employmentType !== undefined) job.employmentType = input.employmentType;
  if (input.skills !== undefined) job.skills = normaliseTags(input.skills);
  if (input.applyUrl !== undefined) job.applyUrl = input.applyUrl;
  if (input.expiresAt !== undefined) job.expiresAt = checkExpiry(input.expiresAt);
  await em.flush();
  return presentJob(job);
}

export async function closeJob(em: EntityManager, actor: Actor, jobId: string): Promise<JobDto> {
  const job = await assertCanManageJob(em, actor, jobId);
  if (job.status !== 'closed') {
    job.status = 'closed';
    await em.flush();
  }
  return presentJob(job);
}

export async function deleteJob(em: EntityManager, actor: Actor, jobId: string): Promise<Removed> {
  const { title } = await assertCanManageJob(em, actor, jobId);
  await em.nativeDelete(Job, { id: jobId });
  return { name: title };
}

export type JobListQuery = {
  remotePolicy?: Job['remotePolicy'];
  employmentType?: Job['employmentType'];
  skill?: string;
  location?: string;
  q?: string;
  postedBy?: string;
  status?: 'open' | 'all';
  limit: number;
  cursor?: string;
};

export async function listJobs(em: EntityManager, actor: Actor, query: JobListQuery): Promise<Page<JobDto>> {
  const poster = query.postedBy === 'me' ? actor.userId : query.postedBy?.toLowerCase();
  const list = cursorList(
    'jobs',
    query.status ?? 'open',
    query.remotePolicy,
    query.employmentType,
    query.skill?.toLowerCase(),
    query.location,
    poster,
    query.q,
  );
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const now = new Date();
  if (query.q && Number((await wordCount(em, { q: query.q }))[0]?.n ?? 0) === 0) {
    throw badRequest('q has no words to search for.', [{ path: '/query/q', message: 'no searchable words' }]);
  }
  const rows = await jobs(em, {
    now,
    openOnly: (query.status ?? 'open') === 'open',
    remotePolicy: query.remotePolicy,
    employmentType: query.employmentType,
    skill: query.skill?.toLowerCase(),
    location: query.location,
    posterId: query.postedBy === 'me' ? actor.userId : undefined,
    posterName: query.postedBy && query.postedBy !== 'me' ? query.postedBy.toLowerCase() : undefined,
    q: query.q,
    before: after?.id,
    limit: query.limit + 1,
  });
  return pageOf(rows, query.limit, (j) => presentJob(j, now), idOf, list);
}

/** GET /jobs/{id}: the job as the list shows it. */
export async function readJob(em: EntityManager, jobId: string, now = new Date()): Promise<JobDto> {
  const row = await rowById(jobId, () => jobById(em, { jobId, now }), `No job with id ${jobId}.`);
  return presentJob(row, now);
}
