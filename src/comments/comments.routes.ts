import type { SomeHandlers } from '../http/kit/handler.js';
import { createComment, deleteComment, getComment, listComments, updateComment } from './comments.service.js';
import { pageLimit } from '../kernel/contract.js';

type Ops = 'listComments' | 'createComment' | 'getComment' | 'updateComment' | 'deleteComment';

export const commentsHandlers = {
  listComments: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listComments(em, actor, path.postId, { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
  createComment: async ({ em, actor, path, body, req }) => {
    const comment = await createComment(em, actor, path.postId, body);
    return {
      status: 201,
      body: comment,
      headers: { Location: `${req.baseUrl}/comments/${comment.id}` },
    };
  },
  getComment: async ({ em, actor, path }) => ({
    status: 200,
    body: await getComment(em, actor, path.commentId),
  }),
  updateComment: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await updateComment(em, actor, path.commentId, body.body),
  }),
  deleteComment: async ({ em, actor, path }) => {
    await deleteComment(em, actor, path.commentId);
    return { status: 204 };
  },
} satisfies SomeHandlers<Ops>;
