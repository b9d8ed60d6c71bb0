import type { SomeHandlers } from '../http/kit/handler.js';
import { getCurrentUser, getUser } from './users.service.js';

// A user's projects and posts are answered by the areas that own them (projects.routes.ts,
// posts.routes.ts): users/ is below both.

export const usersHandlers = {
  getCurrentUser: async ({ em, actor }) => ({ status: 200, body: await getCurrentUser(em, actor.userId) }),
  getUser: async ({ em, path }) => ({ status: 200, body: await getUser(em, path.username) }),
} satisfies SomeHandlers<'getCurrentUser' | 'getUser'>;
