/**
 * Projects and the named authorization checks every area uses on them: read (visibility and
 * membership), manage (owner only) and contribute (owner or member). A private project is a
 * 404 to everyone else, never a 403 that would confirm it exists.
 */
import type { Health } from './pulse.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { ProjectCreate, ProjectUpdate } from '../../codegen/generated/api/types.gen.js';
import { Project } from './project.entity.js';
import { User } from '../users/user.entity.js';
import { actorId, type Actor, type Removed } from '../kernel/actor.js';
import { conflict, forbidden, notFound } from '../kernel/problem.js';
import { cursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf, type CursorList } from '../kernel/cursor.js';
import { presentProject, type ProjectFields } from './projects.presenter.js';
import { publicSiteOf } from '../db/public-site.js';
import { normaliseTags } from '../kernel/tags.js';
import { KeyedQueue } from '../kernel/keyed-queue.js';
import {
  releaseBuildLogs,
  lockOwnedProject,
  lockProject,
  memberIdsAmong,
  projectWithAccess,
  readableProjects,
} from './projects.queries.js';
import type { Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';
import { isUuid } from '../kernel/ids.js';
import { recordProjectUpdated } from './project-events.js';

type ProjectRole = 'owner' | 'member' | 'none';
type Access<P extends ProjectFields> = { project: P; role: ProjectRole };
/**
 * What a read of a project's content learnt of it on the way (its owner, the caller's role), for
 * an adapter that says whose words the content is (the MCP tools): passed to `seen`, no query more.
 */
export type ReadAccess = { owner: { id: string; username: string }; role: ProjectRole };
export type SeenAccess = (access: ReadAccess) => void;

declare const checkedBrand: unique symbol;
/**
 * A read access that a statement of the caller's own checked already by the read rule (a
 * roadmap's status read, which selects `projectReadable` too), for one project and one caller:
 * a read of that project's content given it checks nothing again. Made by `checkedAccess` only.
 */
export type CheckedAccess = ReadAccess & { projectId: string; userId: string; readonly [checkedBrand]: true };

const unknownProject = (projectId: string) => notFound(`No project with id ${projectId}.`).because('unknown-project');
const roleOf = (actor: Actor, ownerId: string, isMember: unknown): ProjectRole =>
  ownerId === actor.userId ? 'owner' : isMember ? 'member' : 'none';

/**
 * The access a statement of the caller's own found, selecting `projectReadable`, `isMember` and
 * the owner as `projectWithAccess` does: a 404 when the caller may not read the project (or
 * found no row), else the caller's role, as readableProject answers.
 */
export function checkedAccess(
  actor: Actor,
  projectId: string,
  row: { readable: unknown; isMember: unknown; owner: ReadAccess['owner'] } | undefined,
): CheckedAccess {
  if (!row?.readable) throw unknownProject(projectId);
  const role = roleOf(actor, row.owner.id, row.isMember);
  return { projectId, userId: actor.userId, owner: row.owner, role } as CheckedAccess;
}

/** Whether `access` was checked for this project and this caller. */
export const checkedFor = (
  access: CheckedAccess | undefined,
  actor: Actor,
  projectId: string,
): access is CheckedAccess => access?.projectId === projectId && access.userId === actor.userId;

/** The caller's user id as a query value: null when it is not a UUID, so it matches no row instead of failing the cast. */

/**
 * The project as the API shows it and the caller's role in it, if the caller may read it; a
 * private project is a 404 to everyone but its owner and members (`projectReadable` decides).
 */
async function readableProject(em: EntityManager, actor: Actor, projectId: string): Promise<Access<ProjectFields>> {
  const [row] = isUuid(projectId) ? await projectWithAccess(em, { projectId, userId: actorId(actor) }) : [];
  const { role } = checkedAccess(actor, projectId, row);
  // checkedAccess has refused a missing row.
  const { readable: _, isMember: __, ...project } = row!;
  return { project, role };
}

/** The project if the actor may see it (public, or owner/member), else 404: the fields the API shows. */
export const assertCanReadProject = readableProject;

/** GET /projects/{id}: the project, if the actor may see it (else 404). */
export async function getProject(em: EntityManager, actor: Actor, projectId: string): Promise<ProjectDto> {
  return presentProject((await readableProject(em, actor, projectId)).project, publicSiteOf(em));
}

const ownerOnly = ({ project, role }: Access<ProjectFields>, projectId: string): ProjectFields => {
  if (role !== 'owner')
    throw forbidden(`Only the owner of project ${projectId} (${project.owner.username}) may change it.`).because(
      role === 'member' ? 'member-not-owner' : 'stranger-not-owner',
    );
  return project;
};

/** Owner only: changing the project's roadmap or members (the fields the API shows). */
export async function assertCanManageProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
): Promise<ProjectFields> {
  return ownerOnly(await readableProject(em, actor, projectId), projectId);
}

/**
 * Writers to one project in this process: a few at work (their transactions begun, the row lock
 * handed straight from one to the next), up to 200 more waiting for a place.
 */
const projectWriters = new KeyedQueue({ concurrency: 3, maxWaiting: 200 });

/**
 * A change to a project or its roadmap in a transaction of its own, once few enough of this
 * process's writers to the same project are at work: the others wait here, not each on the
 * project's row lock in the database holding a pooled connection (kernel/keyed-queue.ts).
 */
export function projectTransaction<T>(em: EntityManager, projectId: string, work: (tem: EntityManager) => Promise<T>) {
  return projectWriters.run(projectId, () => em.transactional(work));
}

/**
 * Inside a change's transaction: takes the project's row lock, which every change to the project
 * or its roadmap takes first (so their events' sequences follow commit order); 404 when the
 * project is gone.
 */
export async function lockProjectForChange(tem: EntityManager, projectId: string): Promise<void> {
  if (!(await lockProject(tem, projectId)))
    throw notFound(`No project with id ${projectId}.`).because('unknown-project');
}

/**
 * Inside a change's transaction, owner only: the project's row lock and the owner check in one
 * statement (the lock every change to the project or its roadmap takes first). When it is not
 * taken, the answer is assertCanManageProject's: 404 to whoever cannot see the project, 403 to
 * whoever can but does not own it.
 */
export async function lockProjectToManage(tem: EntityManager, actor: Actor, projectId: string): Promise<void> {
  const userId = actorId(actor);
  if (isUuid(projectId) && userId && (await lockOwnedProject(tem, projectId, userId))) return;
  await assertCanManageProject(tem, actor, projectId);
  // Owned and readable, yet not locked: deleted between the two statements.
  throw notFound(`No project with id ${projectId}.`).because('unknown-project');
}

/** The project as a managed entity with its owner, once the caller's right to change it is checked. */
const projectEntity = (em: EntityManager, projectId: string): Promise<Project> =>
  em.findOneOrFail(Project, projectId, { populate: ['owner'] });

/** Owner only, as a managed entity: for changing the project itself or attaching to it. */
export async function projectToChange(em: EntityManager, actor: Actor, projectId: string): Promise<Project> {
  await assertCanManageProject(em, actor, projectId);
  return projectEntity(em, projectId);
}

/** Owner or member: posting build logs. */
export async function assertCanContributeToProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
): Promise<Project> {
  const { role } = await readableProject(em, actor, projectId);
  if (role === 'none')
    throw forbidden(`Only the owner and members of project ${projectId} may post build logs to it.`).because(
      'not-a-contributor',
    );
  return projectEntity(em, projectId);
}

/** Link labels are lines (src/kernel/text.ts): stored without the white space around them. */
const trimLabels = (links: { label: string; url: string }[]) =>
  links.map((l) => ({ label: l.label.trim(), url: l.url }));

function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'project';
}

async function freeSlug(em: EntityManager, ownerId: string, base: string): Promise<string> {
  const taken = new Set(
    (await em.find(Project, { owner: ownerId, slug: { $like: `${base}%` } }, { fields: ['slug'] })).map((p) => p.slug),
  );
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

async function flushOrConflict(em: EntityManager, slug: string): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      throw conflict(`You already have a project with the slug '${slug}'.`).because('project-slug-taken');
    throw err;
  }
}

export async function createProject(em: EntityManager, actor: Actor, input: ProjectCreate): Promise<ProjectDto> {
  const slug = input.slug ?? (await freeSlug(em, actor.userId, slugify(input.name)));
  const project = em.create(Project, {
    owner: em.getReference(User, actor.userId),
    name: input.name.trim(),
    slug,
    tagline: input.tagline ?? '',
    description: input.description ?? '',
    stage: input.stage ?? 'idea',
    visibility: input.visibility ?? 'public',
    tags: normaliseTags(input.tags),
    links: trimLabels(input.links ?? []),
    lookingForCollaborators: input.lookingForCollaborators ?? false,
    wantedSkills: normaliseTags(input.wantedSkills),
  });
  await flushOrConflict(em, slug);
  await em.populate(project, ['owner']);
  return presentProject(project, publicSiteOf(em));
}

export async function updateProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  input: ProjectUpdate,
): Promise<ProjectDto> {
  return projectTransaction(em, projectId, async (tem) => {
    // The row lock before the read: this change starts from the last one committed, so its event
    // carries that one's fields too and names only its own in `changed`.
    await lockProjectToManage(tem, actor, projectId);
    const project = await tem.findOneOrFail(Project, projectId, { populate: ['owner'], refresh: true });
    const before = presentProject(project, publicSiteOf(em));
    if (input.name !== undefined) project.name = input.name.trim();
    if (input.slug !== undefined) project.slug = input.slug;
    if (input.tagline !== undefined) project.tagline = input.tagline;
    if (input.description !== undefined) project.description = input.description;
    if (input.stage !== undefined) project.stage = input.stage;
    if (input.visibility !== undefined) project.visibility = input.visibility;
    if (input.tags !== undefined) project.tags = normaliseTags(input.tags);
    if (input.links !== undefined) project.links = trimLabels(input.links);
    if (input.lookingForCollaborators !== undefined) project.lookingForCollaborators = input.lookingForCollaborators;
    if (input.wantedSkills !== undefined) project.wantedSkills = normaliseTags(input.wantedSkills);
    await flushOrConflict(tem, project.slug);
    const after = presentProject(project, publicSiteOf(em));
    const changed = (Object.keys(after) as (keyof typeof after)[]).filter(
      // publicUrls follows visibility: derived, not a field anyone changes.
      (field) =>
        field !== 'updatedAt' &&
        field !== 'publicUrls' &&
        JSON.stringify(before[field]) !== JSON.stringify(after[field]),
    );
    if (changed.length) await recordProjectUpdated(tem, after, changed);
    return after;
  });
}

export async function deleteProject(em: EntityManager, actor: Actor, projectId: string): Promise<Removed> {
  const { name } = await assertCanManageProject(em, actor, projectId);
  await em.transactional(async (tem) => {
    // Locked first: its visibility decides what becomes of its build logs, and may not change meanwhile.
    if (!(await lockProject(tem, projectId))) return;
    await releaseBuildLogs(tem, projectId);
    await tem.nativeDelete(Project, { id: projectId }); // milestones and memberships cascade
  });
  return { name };
}

/** The list a projects cursor belongs to: whose projects (owned by, or with as a member). */
export const projectList = (ownerId: string | undefined, memberId: string | undefined, health?: Health): CursorList =>
  // The health is left out when not chosen: the cursors given before the filter existed stay valid.
  cursorList('projects', ownerId, memberId, ...(health === undefined ? [] : [health]));

/** `owner` is a username or `me`; `ownerId` a user already looked up (GET /users/{username}/projects). */
export type ProjectListQuery = {
  owner?: string;
  ownerId?: string;
  memberId?: string;
  health?: Health;
  limit: number;
  cursor?: string;
};

export async function listProjects(
  em: EntityManager,
  actor: Actor,
  query: ProjectListQuery,
): Promise<Page<ProjectDto>> {
  let ownerId = query.ownerId;
  if (query.owner !== undefined) {
    if (query.owner === 'me') ownerId = actor.userId;
    else {
      const owner = await em.findOne(User, { username: query.owner.toLowerCase() }, { fields: ['id'] });
      if (!owner) return { items: [], nextCursor: null };
      ownerId = owner.id;
    }
  }
  const list = projectList(ownerId, query.memberId, query.health);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const rows = await readableProjects(em, {
    userId: actorId(actor),
    ownerId,
    memberId: query.memberId,
    health: query.health,
    before: after?.id,
    limit: query.limit + 1,
  });
  const site = publicSiteOf(em);
  return pageOf(rows, query.limit, (row) => presentProject(row, site), idOf, list);
}

/** The projects the actor owns, or (role 'member') those it is a member of (MCP list_my_projects). */
export async function listMyProjects(
  em: EntityManager,
  actor: Actor,
  query: { limit: number; cursor?: string; role: 'owner' | 'member'; health?: Health },
): Promise<Page<ProjectDto>> {
  const { role, ...page } = query;
  return listProjects(em, actor, { ...page, ...mine(actor, role) });
}

/** Whose projects list_my_projects reads: those the actor owns, or those it was added to. */
const mine = (actor: Actor, role: 'owner' | 'member'): { ownerId?: string; memberId?: string } =>
  role === 'owner' ? { ownerId: actor.userId } : { memberId: actor.userId };

/** The list a list_my_projects cursor belongs to. */
export const myProjectList = (actor: Actor, role: 'owner' | 'member', health?: Health): CursorList => {
  const { ownerId, memberId } = mine(actor, role);
  return projectList(ownerId, memberId, health);
};

/** Which of `userIds` are members of the project now. */
export async function membersAmong(
  em: EntityManager,
  projectId: string,
  userIds: readonly string[],
): Promise<Set<string>> {
  if (!userIds.length) return new Set();
  return new Set(await memberIdsAmong(em, projectId, userIds));
}
