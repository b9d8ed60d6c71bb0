import type { SomeHandlers } from '../http/kit/handler.js';
import { addReaction, getReactions, removeReaction } from './reactions.service.js';

export const reactionsHandlers = {
  getReactions: async ({ em, actor, path }) => ({ status: 200, body: await getReactions(em, actor, path.postId) }),
  addReaction: async ({ em, actor, path, body }) => {
    const { created, reactions } = await addReaction(em, actor, path.postId, body.kind);
    return { status: created ? 201 : 200, body: reactions };
  },
  removeReaction: async ({ em, actor, path }) => {
    await removeReaction(em, actor, path.postId, path.kind);
    return { status: 204 };
  },
} satisfies SomeHandlers<'getReactions' | 'addReaction' | 'removeReaction'>;
