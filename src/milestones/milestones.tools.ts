import * as z from 'zod';
import { zMilestone, zMilestoneCreate, zMilestonePage, zMilestoneUpdate } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/tool.js';
import { badRequest } from '../http/problem.js';
import { milestoneIdInput, pageInput, projectIdInput } from '../mcp/inputs.js';
import {
  createMilestone,
  deleteMilestone,
  listMilestones,
  MAX_MILESTONES,
  updateMilestone,
} from './milestones.service.js';
import { presentMilestone } from './milestones.presenter.js';

export const milestonesTools = [
  defineTool({
    name: 'get_roadmap',
    scope: 'projects.read',
    title: "Get a project's roadmap",
    description: "A project's milestones in display order (position 1 first), with their status and due dates.",
    input: z.object({ ...projectIdInput, ...pageInput }).strict(),
    output: zMilestonePage,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: (args, { em, actor }) =>
      listMilestones(em, actor, args.projectId, { limit: args.limit ?? 100, cursor: args.cursor }),
  }),
  defineTool({
    name: 'create_milestone',
    scope: 'projects.write',
    title: 'Add a milestone',
    description: `Adds a milestone to a project you own: last in the roadmap, or at \`position\` (later ones move down). Returns the milestone. A roadmap holds at most ${MAX_MILESTONES.toLocaleString('en')} milestones; a full one refuses the call.`,
    input: z.object({ ...projectIdInput, ...zMilestoneCreate.shape }).strict(),
    output: zMilestone,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    creates: true,
    run: async ({ projectId, ...input }, { em, actor }) =>
      presentMilestone(await createMilestone(em, actor, projectId, input)),
  }),
  defineTool({
    name: 'update_milestone',
    scope: 'projects.write',
    title: 'Update a milestone',
    description:
      'Changes the fields you send on a milestone of a project you own; a field left out keeps its value, null clears description or dueDate. A new position moves it.',
    input: z.object({ ...projectIdInput, ...milestoneIdInput, ...zMilestoneUpdate.shape }).strict(),
    output: zMilestone,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async ({ projectId, milestoneId, ...changes }, { em, actor }) => {
      const fields = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
      if (Object.keys(fields).length === 0)
        throw badRequest('Nothing to change: send at least one of title, description, status, dueDate, position.');
      return presentMilestone(await updateMilestone(em, actor, projectId, milestoneId, fields));
    },
  }),
  defineTool({
    name: 'delete_milestone',
    scope: 'projects.write',
    title: 'Delete a milestone',
    description:
      'Deletes a milestone of a project you own, for good: it cannot be undone. The milestones after it move up.',
    input: z.object({ ...projectIdInput, ...milestoneIdInput }).strict(),
    output: z.object({ deleted: z.literal(true), milestoneId: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async ({ projectId, milestoneId }, { em, actor }) => {
      await deleteMilestone(em, actor, projectId, milestoneId);
      return { deleted: true as const, milestoneId };
    },
  }),
];
