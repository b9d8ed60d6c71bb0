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

type Ops =
  | 'listMilestones'
  | 'createMilestone'
  | 'getMilestone'
  | 'updateMilestone'
  | 'deleteMilestone'
  | 'reorderMilestones';

export const milestonesHandlers = {
  listMilestones: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listMilestones(em, actor, path.projectId, { limit: pageLimit(query?.limit), cursor: query?.cursor }),
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
  updateMilestone: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await updateMilestone(em, actor, path.projectId, path.milestoneId, body),
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
