import * as z from 'zod';
import {
  zMilestone,
  zMilestoneCreate,
  zMilestoneStatus,
  zMilestoneUpdate,
  zId,
} from '../../codegen/generated/api/zod.gen.js';
import type { Milestone } from '../../codegen/generated/api/types.gen.js';
import { defineTool } from '../mcp/kit/tool.js';
import { detailInput, milestoneIdInput, pageInput, projectIdInput } from '../mcp/kit/inputs.js';
import { listed, listOutput, plural, unmatched } from '../mcp/kit/answers.js';
import {
  createMilestone,
  cursorAfterServed,
  deleteMilestone,
  listMilestones,
  MAX_MILESTONES,
  updateMilestone,
} from './milestones.service.js';
import { PAGE_SIZE, pageLimit } from '../kernel/contract.js';
import { roadmapStatus } from './roadmap-status.js';
import { dueText, statusLines } from './roadmap-text.js';

const SUMMARY = ['id', 'title', 'status', 'position'] as const;
const one = (verb: string, m: Milestone) =>
  `${verb} milestone ${m.position}. [${m.status}] ${m.title}${dueText(m)} — id ${m.id}.`;

/** The milestone fields an agent sends, each described (the contract's own schemas and limits). */
const milestoneFields = {
  title: zMilestoneCreate.shape.title.describe('The milestone title: one line, 1-200 characters.'),
  description: zMilestoneCreate.shape.description.describe(
    'What the milestone is about, markdown (up to 5,000 characters).',
  ),
  status: zMilestoneCreate.shape.status.describe('planned (the default), in_progress, done or cancelled.'),
  startDate: zMilestoneCreate.shape.startDate.describe('The day work on it starts, YYYY-MM-DD; not after dueDate.'),
  dueDate: zMilestoneCreate.shape.dueDate.describe('The day it is due (its target date), YYYY-MM-DD.'),
  position: zMilestoneCreate.shape.position.describe(
    'Where it goes in the roadmap, 1 = first; later milestones move down. Left out: last.',
  ),
};
const updatedFields = {
  title: zMilestoneUpdate.shape.title.describe('A new title: one line, 1-200 characters.'),
  description: zMilestoneUpdate.shape.description.describe('A new description (markdown); null clears it.'),
  status: zMilestoneUpdate.shape.status.describe('planned, in_progress, done or cancelled.'),
  startDate: zMilestoneUpdate.shape.startDate.describe('A new start day, YYYY-MM-DD; null clears it.'),
  dueDate: zMilestoneUpdate.shape.dueDate.describe(
    "A new due day, YYYY-MM-DD; null clears it. The move is kept in the milestone's due-date history.",
  ),
  dueDateReason: zMilestoneUpdate.shape.dueDateReason.describe(
    'Why the due date moves, one line (up to 500 characters): kept with the move and shown on the roadmap. Only with a new dueDate (for a first one, kept in its history only).',
  ),
  position: zMilestoneUpdate.shape.position.describe('A new place in the roadmap, 1 = first; the others move.'),
};

/** After a milestone id matched nothing: where the ids are. */
const ROADMAP_IDS = "get_roadmap lists this project's milestones with their ids.";

export const milestonesTools = [
  defineTool({
    name: 'get_roadmap',
    operation: 'listMilestones',
    title: "Get a project's roadmap",
    description:
      `A project's status (health, overdue, next due, slipped), then its milestones in display order (position 1 first); ${PAGE_SIZE.default} at a time ` +
      'unless limit says otherwise. Filter by status or overdue; detail "summary" gives ids, titles, status and positions only.',
    input: z
      .object({
        ...projectIdInput,
        status: z
          .array(zMilestoneStatus)
          .min(1)
          .max(4)
          .optional()
          .describe('Only milestones in one of these statuses, e.g. ["planned", "in_progress"].'),
        milestoneIds: z
          .array(zId)
          .min(1)
          .max(100)
          .optional()
          .describe('Only these milestones (ids from an earlier answer), e.g. to read one in full with detail "full".'),
        overdue: z
          .boolean()
          .optional()
          .describe(
            'true: only the overdue milestones (past their due date, neither done nor cancelled); false: the others.',
          ),
        ...pageInput,
        ...detailInput(SUMMARY),
      })
      .strict(),
    output: listOutput(zMilestone, SUMMARY),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args, { em, actor, attribute, preface }) => {
      // The status first, on a roadmap's first page (not when reading chosen milestones): its
      // statement checks the caller's access too, so the page's read does not check it again.
      const status = args.cursor || args.milestoneIds ? undefined : await roadmapStatus(em, actor, args.projectId);
      if (status) preface?.(statusLines(status));
      const page = await listMilestones(
        em,
        actor,
        args.projectId,
        {
          limit: pageLimit(args.limit),
          cursor: args.cursor,
          statuses: args.status,
          ids: args.milestoneIds,
          overdue: args.overdue,
        },
        // Only a project's owner writes its roadmap.
        ({ owner, role }) =>
          attribute?.(() => (role === 'owner' ? { by: 'you' } : { by: 'owner', username: owner.username })),
        status?.access,
      );
      return listed(page, args.detail ?? 'standard', 'get_roadmap', SUMMARY, ['description']);
    },
    headline: (page, args) =>
      `${plural(page.items.length, 'milestone')}${args.overdue === undefined ? '' : args.overdue ? ', overdue' : ', not overdue'}${args.status ? ` (${args.status.join(' or ')})` : ''}, in roadmap order${unmatched(args.cursor ? undefined : args.milestoneIds, page, args.status !== undefined || args.overdue !== undefined)}`,
    texts: ['description'],
    cursorAfter: (kept, page, args, { em }) =>
      cursorAfterServed(
        em,
        args.projectId,
        {
          cursor: args.cursor,
          nextCursor: page.nextCursor,
          statuses: args.status,
          ids: args.milestoneIds,
          overdue: args.overdue,
        },
        { ids: page.items.map((m) => m.id as string), kept: kept.length },
      ),
  }),
  defineTool({
    name: 'create_milestone',
    operation: 'createMilestone',
    title: 'Add a milestone',
    description: `Adds a milestone to a project you own: last in the roadmap, or at \`position\` (later ones move down). Returns the milestone. A roadmap holds at most ${MAX_MILESTONES.toLocaleString('en')} milestones; a full one refuses the call.`,
    input: z.object({ ...projectIdInput, ...milestoneFields }).strict(),
    output: zMilestone,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    creates: {
      request: ({ projectId, ...body }) => ({ params: { projectId }, body }),
      location: (m) => `/projects/${m.projectId}/milestones/${m.id}`,
    },
    run: ({ projectId, ...input }, { em, actor }) => createMilestone(em, actor, projectId, input),
    headline: (m) => one('Created', m),
    texts: ['description'],
  }),
  defineTool({
    name: 'update_milestone',
    operation: 'updateMilestone',
    title: 'Update a milestone',
    description:
      'Changes the fields you send on a milestone of a project you own; a field left out keeps its value, null clears description, startDate or dueDate. A new position moves it. A new dueDate is kept in the due-date history; say why in dueDateReason.',
    input: z.object({ ...projectIdInput, ...milestoneIdInput, ...updatedFields }).strict(),
    output: zMilestone,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    // "At least one field" is the contract's (MilestoneUpdate minProperties), checked by the server.
    run: async ({ projectId, milestoneId, ...changes }, { em, actor, origin }) => {
      const fields = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
      return updateMilestone(em, actor, projectId, milestoneId, fields, { channel: 'mcp', client: origin?.client });
    },
    headline: (m) => one('Updated', m),
    notFound: ROADMAP_IDS,
    texts: ['description'],
  }),
  defineTool({
    name: 'delete_milestone',
    operation: 'deleteMilestone',
    title: 'Delete a milestone',
    description:
      'Deletes a milestone of a project you own, for good: it cannot be undone. The milestones after it move up.',
    input: z.object({ ...projectIdInput, ...milestoneIdInput }).strict(),
    output: z.object({ deleted: z.literal(true), milestoneId: z.string(), title: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async ({ projectId, milestoneId }, { em, actor }) => {
      const { name } = await deleteMilestone(em, actor, projectId, milestoneId);
      return { deleted: true as const, milestoneId, title: name };
    },
    headline: (r) => `Deleted milestone "${r.title}" (${r.milestoneId}); the milestones after it moved up.`,
    notFound: `${ROADMAP_IDS} If you deleted this very id earlier and its answer was lost, it is gone already.`,
  }),
];
