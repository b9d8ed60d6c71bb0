import * as z from 'zod';
import { zProjectPage } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/tool.js';
import { listOwnedProjects } from './projects.service.js';
import { pageInput } from '../mcp/inputs.js';

export const projectsTools = [
  defineTool({
    name: 'list_my_projects',
    scope: 'projects.read',
    title: 'List my projects',
    description:
      'The projects you own, newest first, with their ids. Start here: every other tool takes a projectId from this list.',
    input: z.object({ ...pageInput }).strict(),
    output: zProjectPage,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: (args, { em, actor }) => listOwnedProjects(em, actor, { limit: args.limit ?? 20, cursor: args.cursor }),
  }),
];
