import type { SomeHandlers } from '../http/handler.js';
import { createPost, hidePost, listBuildLogs } from './posts.service.js';
import { presentPost } from './posts.presenter.js';

export const postsHandlers = {
  createPost: async ({ em, actor, body, req }) => {
    const post = await createPost(em, actor, body);
    return { status: 201, body: presentPost(post), headers: { Location: `${req.baseUrl}/posts/${post.id}` } };
  },
  listBuildLogs: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listBuildLogs(em, actor, path.projectId, { limit: query?.limit ?? 20, cursor: query?.cursor }),
  }),
  hidePost: async ({ em, actor, path }) => ({ status: 200, body: presentPost(await hidePost(em, actor, path.postId)) }),
} satisfies SomeHandlers<'createPost' | 'listBuildLogs' | 'hidePost'>;
