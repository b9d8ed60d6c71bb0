import type { SomeHandlers } from '../http/kit/handler.js';
import { closeJob, createJob, deleteJob, listJobs, readJob, updateJob } from './jobs.service.js';
import { pageLimit } from '../kernel/contract.js';

type Ops = 'listJobs' | 'createJob' | 'getJob' | 'updateJob' | 'deleteJob' | 'closeJob';

export const jobsHandlers = {
  listJobs: async ({ em, actor, query }) => ({
    status: 200,
    body: await listJobs(em, actor, { ...query, limit: pageLimit(query?.limit) }),
  }),
  createJob: async ({ em, actor, body, req }) => {
    const job = await createJob(em, actor, body);
    return { status: 201, body: job, headers: { Location: `${req.baseUrl}/jobs/${job.id}` } };
  },
  getJob: async ({ em, path }) => ({ status: 200, body: await readJob(em, path.jobId) }),
  updateJob: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await updateJob(em, actor, path.jobId, body),
  }),
  closeJob: async ({ em, actor, path }) => ({ status: 200, body: await closeJob(em, actor, path.jobId) }),
  deleteJob: async ({ em, actor, path }) => {
    const { name } = await deleteJob(em, actor, path.jobId);
    return { status: 204, removed: name };
  },
} satisfies SomeHandlers<Ops>;
