import type { SomeHandlers } from '../http/kit/handler.js';
import {
  createMilestone,
  deleteMilestone,
  getMilestone,
  listMilestones,
  reorderMilestones,
  updateMilestone,
} from './milestones.service.js';
import { pageLimit } from '../kernel/contract.js';
import { listDueDateChanges } from './due-dates.service.js';

type Ops =
  | 'listMilestones'
  | 'createMilestone'
  | 'getMilestone'
  | 'updateMilestone'
  | 'deleteMilestone'
  | 'reorderMilestones'
  | 'listMilestoneDueDateChanges';

export const milestonesHandlers = {
  listMilestones: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listMilestones(em, actor, path.projectId, {
      limit: pageLimit(query?.limit),
      cursor: query?.cursor,
      statuses: query?.status ? [query.status] : undefined,
      overdue: query?.overdue,
    }),
  }),
  createMilestone: async ({ em, actor, path, body, req }) => {
    const m = await createMilestone(em, actor, path.projectId, body);
    return {
      status: 201,
      body: m,
      headers: { Location: `${req.baseUrl}/projects/${path.projectId}/milestones/${m.id}` },
    };
  },
  getMilestone: async ({ em, actor, path }) => ({
    status: 200,
    body: await getMilestone(em, actor, path.projectId, path.milestoneId),
  }),
  updateMilestone: async ({ em, actor, path, body, req }) => ({
    status: 200,
    body: await updateMilestone(em, actor, path.projectId, path.milestoneId, body, {
      channel: 'rest',
      client: req.get('user-agent'),
    }),
  }),
  listMilestoneDueDateChanges: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listDueDateChanges(em, actor, path.projectId, path.milestoneId, {
      limit: pageLimit(query?.limit),
      cursor: query?.cursor,
    }),
  }),
  deleteMilestone: async ({ em, actor, path }) => {
    const { name } = await deleteMilestone(em, actor, path.projectId, path.milestoneId);
    return { status: 204, removed: name };
  },
  reorderMilestones: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await reorderMilestones(em, actor, path.projectId, body.milestoneIds, 100),
  }),
} satisfies SomeHandlers<Ops>;
