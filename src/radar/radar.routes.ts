import type { SomeHandlers } from '../http/handler.js';
import { radar } from './radar.service.js';

export const radarHandlers = {
  listRadar: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['job', 'project'], { limit: query?.limit ?? 20, cursor: query?.cursor }),
  }),
  listRadarJobs: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['job'], { limit: query?.limit ?? 20, cursor: query?.cursor }),
  }),
  listRadarProjects: async ({ em, actor, query }) => ({
    status: 200,
    body: await radar(em, actor, ['project'], { limit: query?.limit ?? 20, cursor: query?.cursor }),
  }),
} satisfies SomeHandlers<'listRadar' | 'listRadarJobs' | 'listRadarProjects'>;
