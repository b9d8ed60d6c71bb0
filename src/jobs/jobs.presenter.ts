import { presentableLine } from '../kernel/text.js';
import type { Job as JobDto } from '../../codegen/generated/api/types.gen.js';
import type { Job } from './job.entity.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';

/** What the presenter reads: a Job entity, or a row of a typed read (its timestamps as text, and
 *  whether it had expired at the `now` the list filtered with, decided by PostgreSQL at full precision). */
export type JobFields = Pick<
  Job,
  | 'id'
  | 'title'
  | 'company'
  | 'description'
  | 'location'
  | 'remotePolicy'
  | 'employmentType'
  | 'salaryMin'
  | 'salaryMax'
  | 'salaryCurrency'
  | 'skills'
  | 'applyUrl'
  | 'status'
> & {
  poster: Pick<User, 'id' | 'username' | 'displayName'>;
  expiresAt: Timestamp;
  expired?: boolean;
  createdAt: Timestamp;
  updatedAt: Timestamp;
};

const time = (t: Timestamp) => (typeof t === 'string' ? Date.parse(t) : t.getTime());

export function presentJob(job: JobFields, now = new Date()): JobDto {
  return {
    id: job.id,
    title: presentableLine(job.title, 'Untitled job'),
    company: presentableLine(job.company, 'Unnamed company'),
    description: job.description,
    location: job.location ?? null,
    remotePolicy: job.remotePolicy,
    employmentType: job.employmentType,
    salaryMin: job.salaryMin ?? null,
    salaryMax: job.salaryMax ?? null,
    salaryCurrency: job.salaryCurrency ?? null,
    skills: job.skills,
    applyUrl: job.applyUrl,
    status: job.status,
    expiresAt: isoString(job.expiresAt),
    expired: job.expired ?? time(job.expiresAt) <= now.getTime(),
    poster: presentUserSummary(job.poster),
    createdAt: isoString(job.createdAt),
    updatedAt: isoString(job.updatedAt),
  };
}
