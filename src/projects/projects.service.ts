/**
 * Projects and the named authorization checks every area uses on them: read (visibility and
 * membership), manage (owner only) and contribute (owner or member). A private project is a
 * 404 to everyone else, never a 403 that would confirm it exists.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { ProjectCreate, ProjectUpdate } from '../../codegen/generated/api/types.gen.js';
import { Project } from './project.entity.js';
import { User } from '../users/user.entity.js';
import { Post } from '../posts/post.entity.js';
import type { Actor } from '../http/actor.js';
import { conflict, forbidden, notFound } from '../http/problem.js';
import { decodeCursor, decodeCursorUnder, isIdCursor, pageOf, type Page } from '../http/cursor.js';
import { presentProject, type ProjectFields } from './projects.presenter.js';
import { normaliseTags } from '../posts/tags.js';
import { columnsFrom, isoTimestamp, preparedRows, selectColumns } from '../db/hot-read.js';
import type { Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';
import { isUuid } from '../http/ids.js';

type ProjectRole = 'owner' | 'member' | 'none';

/**
 * One query for the project, its owner and whether the actor is a member: every project
 * sub-resource (roadmap, build logs, members, MCP tools) starts here, so it is a hot read.
 * Reads take the columns the API shows, as a row (`ProjectFields`); the paths that change the
 * project take every column as a managed entity (`em.map`: about 0.2 ms more CPU per request,
 * measured under `make bench`).
 */
type Access<P extends ProjectFields> = { project: P; role: ProjectRole };

const IS_MEMBER = 'exists (select 1 from project_members m where m.project_id = p.id and m.user_id = ?) as is_member';
const roleOf = (ownerId: string, isMember: unknown, userId: string): ProjectRole =>
  ownerId === userId ? 'owner' : isMember === true ? 'member' : 'none';

async function readProjectRow(
  em: EntityManager,
  projectId: string,
  userId: string,
): Promise<Access<ProjectFields> | undefined> {
  if (!isUuid(projectId)) return undefined;
  const [row] = await preparedRows<ProjectListRow & { is_member: boolean }>(
    em,
    `select ${PROJECT_ROW_COLUMNS}, ${IS_MEMBER} from projects p join users u on u.id = p.owner_id where p.id = ?`,
    [isUuid(userId) ? userId : null, projectId],
  );
  return row && { project: fromProjectListRow(row), role: roleOf(row.owner_id, row.is_member, userId) };
}

async function readProjectEntity(
  em: EntityManager,
  projectId: string,
  userId: string,
): Promise<Access<Project> | undefined> {
  if (!isUuid(projectId)) return undefined;
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select ${selectColumns(em, Project, 'p')}, ${selectColumns(em, User, 'u', 'owner__')}, ${IS_MEMBER}
     from projects p join users u on u.id = p.owner_id where p.id = ?`,
    [isUuid(userId) ? userId : null, projectId],
  );
  if (!row) return undefined;
  em.map(User, columnsFrom(em, User, row, 'owner__'));
  const project = em.map(Project, columnsFrom(em, Project, row, ''));
  return { project, role: roleOf(project.owner.id, row.is_member, userId) };
}

/** A private project is a 404 to everyone but its owner and members. */
function visible<P extends ProjectFields>(found: Access<P> | undefined, projectId: string): Access<P> {
  if (!found || !readable(found.project.visibility, found.role)) throw notFound(`No project with id ${projectId}.`);
  return found;
}
const readable = (visibility: ProjectFields['visibility'], role: ProjectRole) =>
  visibility !== 'private' || role !== 'none';
/**
 * The same rule in SQL, for the statements that filter or gate on it: project `p` is public,
 * owned by the caller (the one `?` parameter: the caller's user id) or `member` (an SQL boolean
 * saying the caller is one of its members). Every statement that decides visibility itself
 * (the project list, search, the roadmap's gate) uses this, so the rule has one SQL wording.
 */
export const readableSql = (p: string, member: string) =>
  `(${p}.visibility = 'public' or ${p}.owner_id = ? or ${member})`;

/** The caller's user id as a query parameter: null when it is not a UUID, so it matches no row instead of failing the cast. */
export const actorId = (actor: Actor): string | null => (isUuid(actor.userId) ? actor.userId : null);

/**
 * The read check and a read of the project's own rows in one round trip, for the hottest
 * sub-resource reads (the roadmap, the build logs): `rowsSql` selects from the project `p` (it
 * may use `p.id`) with a non-null `id` column, and runs only when the caller may read the project. The answer
 * is decided by `readable`, as for `assertCanReadProject` (404); the SQL gate only spares the
 * read, so a mistake in it could cost time, never show a private project's rows.
 */
export async function readProjectRows<R extends { id: string }>(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  rowsSql: string,
  params: unknown[],
): Promise<R[]> {
  const userId = actorId(actor);
  // `offset 0` keeps the check a gate in front of the rows (a one-time filter: they are not
  // read at all for a caller who may not see them) instead of a filter on each row read.
  const rows = !isUuid(projectId)
    ? []
    : await preparedRows<
        R & {
          project_visibility__: ProjectFields['visibility'];
          project_owner_id__: string;
          project_is_member__: boolean;
        }
      >(
        em,
        `select p.visibility as project_visibility__, p.owner_id as project_owner_id__, a.is_member as project_is_member__, r.*
     from projects p
     cross join lateral (select ${IS_MEMBER}) a
     left join lateral (select * from (${rowsSql}) x where ${readableSql('p', 'a.is_member')} offset 0) r on true
     where p.id = ?`,
        [userId, ...params, userId, projectId],
      );
  const [first] = rows;
  if (
    !first ||
    !readable(first.project_visibility__, roleOf(first.project_owner_id__, first.project_is_member__, actor.userId))
  ) {
    throw notFound(`No project with id ${projectId}.`);
  }
  return (first.id as string | null) === null ? [] : rows; // the left join's one empty row: no rows
}

/** The cursor of a list under a project read with `readProjectRows` (decodeCursorUnder: 404 before a bad cursor). */
export const projectListCursor = <C>(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  cursor: string | undefined,
  isCursor: (v: unknown) => v is C,
): Promise<C | undefined> => decodeCursorUnder(cursor, isCursor, () => assertCanReadProject(em, actor, projectId));

/** The project if the actor may see it (public, or owner/member), else 404: the fields the API shows. */
export async function assertCanReadProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
): Promise<Access<ProjectFields>> {
  return visible(await readProjectRow(em, projectId, actor.userId), projectId);
}

const ownerOnly = <P extends ProjectFields>({ project, role }: Access<P>, projectId: string): P => {
  if (role !== 'owner')
    throw forbidden(`Only the owner of project ${projectId} (${project.owner.username}) may change it.`);
  return project;
};

/** Owner only: changing the project's roadmap or members (the fields the API shows). */
export async function assertCanManageProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
): Promise<ProjectFields> {
  return ownerOnly(visible(await readProjectRow(em, projectId, actor.userId), projectId), projectId);
}

/** Owner only, as a managed entity: for changing the project itself or attaching to it. */
export async function projectToChange(em: EntityManager, actor: Actor, projectId: string): Promise<Project> {
  return ownerOnly(visible(await readProjectEntity(em, projectId, actor.userId), projectId), projectId);
}

/** Owner or member: posting build logs. */
export async function assertCanContributeToProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
): Promise<Project> {
  const { project, role } = visible(await readProjectEntity(em, projectId, actor.userId), projectId);
  if (role === 'none') throw forbidden(`Only the owner and members of project ${projectId} may post build logs to it.`);
  return project;
}

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
      throw conflict(`You already have a project with the slug '${slug}'.`);
    throw err;
  }
}

export async function createProject(em: EntityManager, actor: Actor, input: ProjectCreate): Promise<Project> {
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
    links: input.links ?? [],
    lookingForCollaborators: input.lookingForCollaborators ?? false,
    wantedSkills: normaliseTags(input.wantedSkills),
  });
  await flushOrConflict(em, slug);
  await em.populate(project, ['owner']);
  return project;
}

export async function updateProject(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  input: ProjectUpdate,
): Promise<Project> {
  const project = await projectToChange(em, actor, projectId);
  if (input.name !== undefined) project.name = input.name.trim();
  if (input.slug !== undefined) project.slug = input.slug;
  if (input.tagline !== undefined) project.tagline = input.tagline;
  if (input.description !== undefined) project.description = input.description;
  if (input.stage !== undefined) project.stage = input.stage;
  if (input.visibility !== undefined) project.visibility = input.visibility;
  if (input.tags !== undefined) project.tags = normaliseTags(input.tags);
  if (input.links !== undefined) project.links = input.links;
  if (input.lookingForCollaborators !== undefined) project.lookingForCollaborators = input.lookingForCollaborators;
  if (input.wantedSkills !== undefined) project.wantedSkills = normaliseTags(input.wantedSkills);
  await flushOrConflict(em, project.slug);
  return project;
}

export async function deleteProject(em: EntityManager, actor: Actor, projectId: string): Promise<void> {
  await assertCanManageProject(em, actor, projectId);
  await em.transactional(async (tem) => {
    // Build logs outlive their project as plain posts: their authors wrote them.
    await tem.nativeUpdate(Post, { project: projectId }, { project: null, kind: 'post' });
    await tem.nativeDelete(Project, { id: projectId }); // milestones and memberships cascade
  });
}

/** `owner` is a username or `me`; `ownerId` a user already looked up (GET /users/{username}/projects). */
export type ProjectListQuery = { owner?: string; ownerId?: string; limit: number; cursor?: string };

export async function listProjects(
  em: EntityManager,
  actor: Actor,
  query: ProjectListQuery,
): Promise<Page<ProjectDto>> {
  const after = decodeCursor(query.cursor, isIdCursor);
  let ownerId = query.ownerId;
  if (query.owner !== undefined) {
    if (query.owner === 'me') ownerId = actor.userId;
    else {
      const owner = await em.findOne(User, { username: query.owner.toLowerCase() }, { fields: ['id'] });
      if (!owner) return { items: [], nextCursor: null };
      ownerId = owner.id;
    }
  }
  // A hot list: one query (visibility and membership included), read as rows, not entities.
  const actorId = actor.userId || null;
  const rows = await preparedRows<ProjectListRow>(
    em,
    `select ${PROJECT_ROW_COLUMNS}
     from projects p join users u on u.id = p.owner_id
     where ${readableSql('p', 'exists (select 1 from project_members m where m.project_id = p.id and m.user_id = ?)')}
       ${ownerId ? 'and p.owner_id = ?' : ''} ${after ? 'and p.id < ?' : ''}
     order by p.id desc limit ?`,
    [actorId, actorId, ...(ownerId ? [ownerId] : []), ...(after ? [after.id] : []), query.limit + 1],
  );
  return pageOf(rows.map(fromProjectListRow), query.limit, presentProject, (p) => ({ id: p.id }));
}

/** The columns the API shows of a project (`p`) and its owner (`u`), as a `ProjectListRow`. */
const PROJECT_ROW_COLUMNS = `p.id, p.name, p.slug, p.tagline, p.description, p.stage, p.visibility, p.tags, p.links, p.looking_for_collaborators,
       p.wanted_skills, ${isoTimestamp('p.created_at')} as created_at, ${isoTimestamp('p.updated_at')} as updated_at,
       u.id as owner_id, u.username as owner_username, u.display_name as owner_display_name`;

type ProjectListRow = {
  id: string;
  name: string;
  slug: string;
  tagline: string;
  description: string;
  stage: ProjectFields['stage'];
  visibility: ProjectFields['visibility'];
  tags: string[];
  links: ProjectFields['links'];
  looking_for_collaborators: boolean;
  wanted_skills: string[];
  created_at: string;
  updated_at: string;
  owner_id: string;
  owner_username: string;
  owner_display_name: string;
};
const fromProjectListRow = (r: ProjectListRow): ProjectFields => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  tagline: r.tagline,
  description: r.description,
  stage: r.stage,
  visibility: r.visibility,
  tags: r.tags,
  links: r.links,
  lookingForCollaborators: r.looking_for_collaborators,
  wantedSkills: r.wanted_skills,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  owner: { id: r.owner_id, username: r.owner_username, displayName: r.owner_display_name },
});

/** The projects the actor owns (MCP list_my_projects). */
export async function listOwnedProjects(
  em: EntityManager,
  actor: Actor,
  query: { limit: number; cursor?: string },
): Promise<Page<ProjectDto>> {
  return listProjects(em, actor, { ...query, owner: 'me' });
}
