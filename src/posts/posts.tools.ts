import * as z from 'zod';
import { zPost, zPostCreate, zPostPage } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/tool.js';
import { pageInput, projectIdInput } from '../mcp/inputs.js';
import { createPost, listBuildLogs } from './posts.service.js';
import { presentPost } from './posts.presenter.js';

export const postsTools = [
  defineTool({
    name: 'list_build_logs',
    scope: 'projects.read',
    title: "List a project's build logs",
    description: 'The build logs posted for a project, newest first.',
    input: z.object({ ...projectIdInput, ...pageInput }).strict(),
    output: zPostPage,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: (args, { em, actor }) =>
      listBuildLogs(em, actor, args.projectId, { limit: args.limit ?? 20, cursor: args.cursor }),
  }),
  defineTool({
    name: 'create_build_log',
    scope: 'content.write',
    title: 'Post a build log',
    description:
      'Publishes a build log (a markdown post about progress) on a project you own or are a member of. It is public wherever the project is.',
    input: z
      .object({
        ...projectIdInput,
        title: zPostCreate.shape.title,
        body: zPostCreate.shape.body,
        tags: zPostCreate.shape.tags,
      })
      .strict(),
    output: zPost,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    creates: true,
    run: async ({ projectId, ...post }, { em, actor }) =>
      presentPost(await createPost(em, actor, { kind: 'build_log', projectId, ...post })),
  }),
];
