import * as z from 'zod';
import { zCursor, zProject } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/tool.js';
import { listMyProjects } from './projects.service.js';
import { detailInput, pageInput } from '../mcp/inputs.js';
import { listedItem, sized } from '../mcp/answers.js';
import { cursorAfterId } from '../kernel/cursor.js';

const SUMMARY = ['id', 'name', 'slug'] as const;

export const projectsTools = [
  defineTool({
    name: 'list_my_projects',
    scope: 'projects.read',
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
    output: z.object({ items: z.array(listedItem(zProject, SUMMARY)), nextCursor: zCursor }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args, { em, actor }) => {
      const page = await listMyProjects(em, actor, {
        limit: args.limit ?? 20,
        cursor: args.cursor,
        role: args.role ?? 'owner',
      });
      return {
        ...page,
        items: sized(page.items, args.detail ?? 'standard', 'list_my_projects', SUMMARY, ['description']),
      };
    },
    headline: (page, args) =>
      `${page.items.length} project${page.items.length === 1 ? '' : 's'} you ${args.role === 'member' ? 'are a member of' : 'own'}, newest first`,
    texts: ['description'],
    cursorAfter: (p) => cursorAfterId(p as { id: string }),
  }),
];
