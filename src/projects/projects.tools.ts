import * as z from 'zod';
import { zProject } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/kit/tool.js';
import { listMyProjects, myProjectList } from './projects.service.js';
import { detailInput, pageInput } from '../mcp/kit/inputs.js';
import { listed, listOutput, plural } from '../mcp/kit/answers.js';
import { cursorAfterId } from '../kernel/cursor.js';
import { pageLimit } from '../kernel/contract.js';

const SUMMARY = ['id', 'name', 'slug'] as const;

export const projectsTools = [
  defineTool({
    name: 'list_my_projects',
    operation: 'listProjects',
    title: 'List my projects',
    description:
      'The projects you own, newest first, with their ids. Start here: every other tool takes a projectId from ' +
      'this list. role "member" lists the projects you are a member of instead (you may post build logs there).',
    input: z
      .object({
        role: z
          .enum(['owner', 'member'])
          .optional()
          .describe('owner (the default): projects you own; member: projects you were added to as a member.'),
        ...pageInput,
        ...detailInput,
      })
      .strict(),
    output: listOutput(zProject, SUMMARY),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args, { em, actor, attribute }) => {
      const role = args.role ?? 'owner';
      const page = await listMyProjects(em, actor, { limit: pageLimit(args.limit), cursor: args.cursor, role });
      // A project's name and text are its owner's: the caller's own, or (role member) someone else's.
      const owners = new Map(page.items.map((p) => [p.id, p.owner.username]));
      attribute?.((item) =>
        role === 'owner' ? { by: 'you' } : { by: 'owner', username: owners.get(item.id as string) },
      );
      return listed(page, args.detail ?? 'standard', 'list_my_projects', SUMMARY, ['description']);
    },
    headline: (page, args) =>
      `${plural(page.items.length, 'project')} you ${args.role === 'member' ? 'are a member of' : 'own'}, newest first`,
    followUp: async (page, args, { em, actor }) => {
      if (page.items.length || args.cursor || (args.role ?? 'owner') !== 'owner') return undefined;
      const member = await listMyProjects(em, actor, { limit: 1, role: 'member' });
      return member.items.length
        ? 'You are a member of other projects: call list_my_projects with role "member" to list them.'
        : 'Create a project first (POST /api/v1/projects, or on the web), or ask an owner to add you as a member.';
    },
    texts: ['description'],
    cursorAfter: async (kept, _page, args, { actor }) =>
      cursorAfterId(kept.at(-1) as { id: string }, myProjectList(actor, args.role ?? 'owner')),
  }),
];
