import * as z from 'zod';
import { zCursor, zProject } from '../../codegen/generated/api/zod.gen.js';
import type { Project } from '../../codegen/generated/api/types.gen.js';
import { defineTool } from '../mcp/tool.js';
import { listMyProjects } from './projects.service.js';
import { detailInput, pageInput } from '../mcp/inputs.js';
import { listedItem, listSummary, sized } from '../mcp/answers.js';

const SUMMARY = ['id', 'name', 'slug'] as const;
const line = (p: Partial<Project>) => `${p.name} (${p.slug}) — id ${p.id}`;

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
    annotations: { readOnlyHint: true, openWorldHint: false },
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
    summarize: (page, args) =>
      listSummary(
        `project${page.items.length === 1 ? '' : 's'} you ${args.role === 'member' ? 'are a member of' : 'own'}`,
        page.items,
        page.nextCursor,
        line,
      ),
  }),
];
