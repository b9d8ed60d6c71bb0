import type { SomeHandlers } from '../http/kit/handler.js';
import { readUser, userNamed } from './users.service.js';
import { presentUser } from './users.presenter.js';
import { invalidToken } from '../kernel/problem.js';

// A user's projects and posts are answered by the areas that own them (projects.routes.ts,
// posts.routes.ts): users/ is below both.

export const usersHandlers = {
  getCurrentUser: async ({ em, actor }) => {
    const user = await readUser(em, { id: actor.userId });
    // The account went while its key was in flight: the key is no longer anyone's.
    if (!user) throw invalidToken('The account this API key belonged to no longer exists.');
    return { status: 200, body: presentUser(user) };
  },
  getUser: async ({ em, path }) => ({ status: 200, body: presentUser(await userNamed(em, path.username)) }),
} satisfies SomeHandlers<'getCurrentUser' | 'getUser'>;
