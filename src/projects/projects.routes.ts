import type { SomeHandlers } from '../http/kit/handler.js';
import { createProject, deleteProject, getProject, listProjects, updateProject } from './projects.service.js';
import { addMember, listMembers, removeMember } from './members.service.js';
import { pageLimit } from '../kernel/contract.js';
import { userNamed } from '../users/users.service.js';

type Ops =
  | 'listProjects'
  | 'createProject'
  | 'getProject'
  | 'updateProject'
  | 'deleteProject'
  | 'listProjectMembers'
  | 'addProjectMember'
  | 'removeProjectMember'
  | 'listUserProjects';

export const projectsHandlers = {
  listProjects: async ({ em, actor, query }) => ({
    status: 200,
    body: await listProjects(em, actor, {
      owner: query?.owner,
      health: query?.health,
      limit: pageLimit(query?.limit),
      cursor: query?.cursor,
    }),
  }),
  createProject: async ({ em, actor, body, req }) => {
    const project = await createProject(em, actor, body);
    return {
      status: 201,
      body: project,
      headers: { Location: `${req.baseUrl}/projects/${project.id}` },
    };
  },
  getProject: async ({ em, actor, path }) => ({
    status: 200,
    body: await getProject(em, actor, path.projectId),
  }),
  updateProject: async ({ em, actor, path, body }) => ({
    status: 200,
    body: await updateProject(em, actor, path.projectId, body),
  }),
  deleteProject: async ({ em, actor, path }) => {
    const { name } = await deleteProject(em, actor, path.projectId);
    return { status: 204, removed: name };
  },
  listProjectMembers: async ({ em, actor, path, query }) => ({
    status: 200,
    body: await listMembers(em, actor, path.projectId, { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
  addProjectMember: async ({ em, actor, path, body }) => ({
    status: 201,
    body: await addMember(em, actor, path.projectId, body.username),
  }),
  removeProjectMember: async ({ em, actor, path }) => {
    await removeMember(em, actor, path.projectId, path.username);
    return { status: 204, removed: `@${path.username.toLowerCase()}` };
  },
  // The user is looked up once, for the 404; the list then filters by their id.
  listUserProjects: async ({ em, actor, path, query }) => {
    const user = await userNamed(em, path.username);
    return {
      status: 200,
      body: await listProjects(em, actor, { ownerId: user.id, limit: pageLimit(query?.limit), cursor: query?.cursor }),
    };
  },
} satisfies SomeHandlers<Ops>;
