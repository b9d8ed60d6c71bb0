import type { SomeHandlers } from '../http/kit/handler.js';
import { createPost, deletePost, getPost, listBuildLogs, listPosts, updatePost } from './posts.service.js';
import { pageLimit } from '../kernel/contract.js';
import { userNamed } from '../users/users.service.js';

export const postsHandlers = {
  listPosts: async ({ em, actor, query }) => ({
    status: 200,
    body: await listPosts(em, actor, {
      author: query?.author,
      tag: query?.tag,
      kind: query?.kind,
      projectId: query?.projectId,
      limit: pageLimit(query?.limit),
      cursor: query?.cursor,
      view: query?.view,
    }),
  }),
  getPost: async ({ em, actor, path }) => ({ status: 200, body: await getPost(em, actor, path.postId) }),
  updatePost: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await updatePost(em, actor, path.postId, body),
  }),
  deletePost: async ({ em, actor, path }) => {
    const { name } = await deletePost(em, actor, path.postId);
    return { status: 204, removed: name };
  },
  createPost: async ({ em, actor, body, req }) => {
    const post = await createPost(em, actor, body);
    return { status: 201, body: post, headers: { Location: `${req.baseUrl}/posts/${post.id}` } };
  },
  listBuildLogs: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listBuildLogs(em, actor, path.projectId, {
      limit: pageLimit(query?.limit),
      cursor: query?.cursor,
      view: query?.view,
    }),
  }),
  // The user is looked up once, for the 404; the list then filters by their id.
  listUserPosts: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return {
      status: 200,
      body: await listPosts(em, actor, {
        authorId: user.id,
        limit: pageLimit(query?.limit),
        cursor: query?.cursor,
        view: query?.view,
      }),
    };
  },
} satisfies SomeHandlers<
  'listPosts' | 'getPost' | 'createPost' | 'updatePost' | 'deletePost' | 'listBuildLogs' | 'listUserPosts'
>;
