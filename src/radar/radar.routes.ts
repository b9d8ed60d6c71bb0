import type { SomeHandlers } from '../http/kit/handler.js';
import { radar } from './radar.service.js';
import { pageLimit } from '../kernel/contract.js';

export const radarHandlers = {
  listRadar: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['job', 'project'], { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
  listRadarJobs: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['job'], { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
  listRadarProjects: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['project'], { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
} satisfies SomeHandlers<'listRadar' | 'listRadarJobs' | 'listRadarProjects'>;
