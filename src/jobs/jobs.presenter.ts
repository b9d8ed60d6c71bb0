import type { Job as JobDto } from '../../codegen/generated/api/types.gen.js';
import type { Job } from './job.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';

export function presentJob(job: Job, now = new Date()): JobDto {
  return {
    id: job.id,
    title: job.title,
    company: job.company,
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
    expiresAt: job.expiresAt.toISOString(),
    expired: job.expiresAt <= now,
    poster: presentUserSummary(job.poster),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  };
}
