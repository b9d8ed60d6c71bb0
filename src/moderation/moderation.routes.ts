import type { SomeHandlers } from '../http/kit/handler.js';
import { setCommentHidden, setPostHidden } from './moderation.service.js';

export const moderationHandlers = {
  hidePost: async ({ em, actor, path }) => ({
    status: 200,
    body: await setPostHidden(em, actor, path.postId, true),
  }),
  unhidePost: async ({ em, actor, path }) => ({
    status: 200,
    body: await setPostHidden(em, actor, path.postId, false),
  }),
  hideComment: async ({ em, actor, path }) => ({
    status: 200,
    body: await setCommentHidden(em, actor, path.commentId, true),
  }),
  unhideComment: async ({ em, actor, path }) => ({
    status: 200,
    body: await setCommentHidden(em, actor, path.commentId, false),
  }),
} satisfies SomeHandlers<'hidePost' | 'unhidePost' | 'hideComment' | 'unhideComment'>;
