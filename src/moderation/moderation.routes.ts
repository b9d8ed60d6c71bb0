import type { SomeHandlers } from '../http/kit/handler.js';
import { setCommentHidden, setPostHidden } from './moderation.service.js';
import { presentPost } from '../posts/posts.presenter.js';
import { presentComment } from '../comments/comments.presenter.js';

export const moderationHandlers = {
  hidePost: async ({ em, actor, path }) => ({
    status: 200,
    body: presentPost(await setPostHidden(em, actor, path.postId, true)),
  }),
  unhidePost: async ({ em, actor, path }) => ({
    status: 200,
    body: presentPost(await setPostHidden(em, actor, path.postId, false)),
  }),
  hideComment: async ({ em, actor, path }) => ({
    status: 200,
    body: presentComment(await setCommentHidden(em, actor, path.commentId, true), actor.userId),
  }),
  unhideComment: async ({ em, actor, path }) => ({
    status: 200,
    body: presentComment(await setCommentHidden(em, actor, path.commentId, false), actor.userId),
  }),
} satisfies SomeHandlers<'hidePost' | 'unhidePost' | 'hideComment' | 'unhideComment'>;
