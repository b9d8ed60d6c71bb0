import type { SomeHandlers } from '../http/handler.js';
import { getUserById, findUserByUsername } from './users.service.js';
import { presentUser } from './users.presenter.js';
import { notFound } from '../http/problem.js';
import { listProjects } from '../projects/projects.service.js';
import { listPosts } from '../posts/posts.service.js';
import type { EntityManager } from '@mikro-orm/postgresql';

async function userNamed(em: EntityManager, username: string) {
  const user = await findUserByUsername(em, username);
  if (!user) throw notFound(`There is no user named '${username}'.`);
  return user;
}

export const usersHandlers = {
  getCurrentUser: async ({ em, actor }) => ({ status: 200, body: presentUser(await getUserById(em, actor.userId)) }),
  getUser: async ({ em, path }) => ({ status: 200, body: presentUser(await userNamed(em, path.username)) }),
  listUserProjects: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return { status: 200, body: await listProjects(em, actor, { owner: user.username, limit: query?.limit ?? 20, cursor: query?.cursor }) };
  },
  listUserPosts: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return { status: 200, body: await listPosts(em, actor, { author: user.username, limit: query?.limit ?? 20, cursor: query?.cursor }) };
  },
} satisfies SomeHandlers<'getCurrentUser' | 'getUser' | 'listUserProjects' | 'listUserPosts'>;
