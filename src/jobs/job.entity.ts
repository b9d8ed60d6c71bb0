import { resourceGoneTrigger, searchChangedTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';

const REMOTE_POLICIES = ['onsite', 'hybrid', 'remote'] as const;
const EMPLOYMENT_TYPES = ['full_time', 'part_time', 'contract', 'internship', 'freelance'] as const;
const JOB_STATUSES = ['open', 'closed'] as const;

const JobSchema = defineEntity({
  name: 'Job',
  tableName: 'jobs',
  properties: {
    id: uuidv7Key(),
    poster: () => p.manyToOne(User).deleteRule('cascade'),
    title: p.string().length(200),
    company: p.string().length(200),
    description: p.text(),
    location: p.string().length(200).nullable(),
    remotePolicy: p.enum(REMOTE_POLICIES),
    employmentType: p.enum(EMPLOYMENT_TYPES),
    salaryMin: p.integer().nullable(),
    salaryMax: p.integer().nullable(),
    salaryCurrency: p.string().length(3).nullable(),
    skills: p.type(TextArrayType).default([]),
    applyUrl: p.string().length(500),
    status: p.enum(JOB_STATUSES).default('open'),
    expiresAt: p.datetime(),
    /** Full-text search vector kept by PostgreSQL, written as PostgreSQL prints it (clean schema diff). */
    search: p
      .type('tsvector')
      .generated(
        `(((setweight(to_tsvector('english'::regconfig, (COALESCE(title, ''::character varying))::text), 'A'::"char") || setweight(to_tsvector('english'::regconfig, (((COALESCE(company, ''::character varying))::text || ' '::text) || shipyard_words(skills))), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(description, ''::text)), 'C'::"char"))) stored`,
      )
      .lazy()
      .nullable()
      .hidden(),
    ...changeTimes(),
  },
  indexes: [
    { name: 'jobs_listing_idx', properties: ['status', 'expiresAt', 'id'] },
    { name: 'jobs_poster_idx', properties: ['poster'] },
    { name: 'jobs_search_idx', properties: ['search'], type: 'gin' },
  ],
  triggers: [searchChangedTrigger('jobs', 'search, status, expires_at'), resourceGoneTrigger('jobs')],
  // Salary is all or nothing, and min ≤ max (also checked with a clear 400 in the service).
  checks: [
    {
      name: 'jobs_salary_check',
      expression:
        '(((salary_min IS NULL) AND (salary_max IS NULL) AND (salary_currency IS NULL)) OR ((salary_min IS NOT NULL) AND (salary_max IS NOT NULL) AND (salary_currency IS NOT NULL) AND (salary_min <= salary_max)))',
    },
  ],
});
export class Job extends JobSchema.class {}
JobSchema.setClass(Job);
