import type { SomeHandlers } from '../http/handler.js';
import { getUserById } from './users.service.js';
import { presentUser } from './users.presenter.js';

export const usersHandlers = {
  getCurrentUser: async ({ em, actor }) => ({ status: 200, body: presentUser(await getUserById(em, actor.userId)) }),
} satisfies SomeHandlers<'getCurrentUser'>;
