import type { SomeHandlers } from '../http/handler.js';
import { readUser } from './users.service.js';
import { presentUser } from './users.presenter.js';
import { invalidToken, notFound } from '../kernel/problem.js';
import { listProjects } from '../projects/projects.service.js';
import { listPosts } from '../posts/posts.service.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageLimit } from '../kernel/contract.js';

async function userNamed(em: EntityManager, username: string) {
  const user = await readUser(em, { username });
  if (!user) throw notFound(`There is no user named '${username}'.`);
  return user;
}

export const usersHandlers = {
  getCurrentUser: async ({ em, actor }) => {
    const user = await readUser(em, { id: actor.userId });
    // The account went while its key was in flight: the key is no longer anyone's.
    if (!user) throw invalidToken('The account this API key belonged to no longer exists.');
    return { status: 200, body: presentUser(user) };
  },
  getUser: async ({ em, path }) => ({ status: 200, body: presentUser(await userNamed(em, path.username)) }),
  // The user is looked up once, for the 404; the list then filters by their id.
  listUserProjects: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return {
      status: 200,
      body: await listProjects(em, actor, { ownerId: user.id, limit: pageLimit(query?.limit), cursor: query?.cursor }),
    };
  },
  listUserPosts: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return {
      status: 200,
      body: await listPosts(em, actor, { authorId: user.id, limit: pageLimit(query?.limit), cursor: query?.cursor }),
    };
  },
} satisfies SomeHandlers<'getCurrentUser' | 'getUser' | 'listUserProjects' | 'listUserPosts'>;
