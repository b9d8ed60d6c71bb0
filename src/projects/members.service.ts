import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { Member as MemberDto } from '../../codegen/generated/api/types.gen.js';
import { recordMemberEvent } from './project-events.js';
import { ProjectMember } from './project.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor } from '../kernel/actor.js';
import { conflict, forbidden, notFound, unprocessable } from '../kernel/problem.js';
import { cursorList, decodeCursor, encodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { assertCanReadProject, projectToChange } from './projects.service.js';
import { presentMember, presentOwnerAsMember } from './projects.presenter.js';
import { memberPage } from './projects.queries.js';
import { FIRST_ID } from '../db/reads.js';

/** The owner first (on the first page), then members in the order they joined. */
export async function listMembers(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<MemberDto>> {
  const { project } = await assertCanReadProject(em, actor, projectId);
  const list = cursorList('members', projectId);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const owner = after ? [] : [presentOwnerAsMember(project)];
  const limit = query.limit - owner.length;
  const rows = await memberPage(em, { projectId, after: after?.id ?? FIRST_ID, limit: limit + 1 });
  // A first page of one holds the owner alone: the members, if any, start on the next one.
  if (limit === 0) return { items: owner, nextCursor: rows.length ? encodeCursor({ id: FIRST_ID }, list) : null };
  const page = pageOf(rows, limit, presentMember, idOf, list);
  return { items: [...owner, ...page.items], nextCursor: page.nextCursor };
}

export async function addMember(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  username: string,
): Promise<MemberDto> {
  const project = await projectToChange(em, actor, projectId);
  const user = await em.findOne(User, { username: username.toLowerCase() });
  if (!user) throw unprocessable(`There is no user named '${username}'.`).because('unknown-user');
  if (user.id === project.owner.id)
    throw conflict(`${user.username} owns this project already.`).because('already-owner');
  return em.transactional(async (tem) => {
    const member = tem.create(ProjectMember, { project, user });
    try {
      await tem.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException)
        throw conflict(`${user.username} is already a member of this project.`).because('already-member');
      throw err;
    }
    const presented = presentMember(member);
    await recordMemberEvent(tem, 'project.member_added', projectId, presented);
    return presented;
  });
}

/** The owner removes a member, or a member leaves. */
export async function removeMember(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  username: string,
): Promise<void> {
  const { project, role } = await assertCanReadProject(em, actor, projectId);
  const target = username.toLowerCase();
  if (target === project.owner.username) {
    if (role !== 'owner')
      throw forbidden(
        `Only the owner of project ${projectId} may remove members, and nobody removes the owner.`,
      ).because('not-owner-of-members');
    throw conflict('The owner cannot be removed from their own project.').because('owner-not-removable');
  }
  const member = await em.findOne(
    ProjectMember,
    { project: projectId, user: { username: target } },
    { populate: ['user'] },
  );
  const leaving = member !== null && member.user.id === actor.userId;
  if (role !== 'owner' && !leaving) {
    throw forbidden(
      `Only the owner of project ${projectId} may remove members; a member may only remove themselves.`,
    ).because('not-owner-of-members');
  }
  if (!member) throw notFound(`${username} is not a member of project ${projectId}.`);
  // The delete first, and its event in the same transaction; none when another request removed
  // the member meanwhile (its own event tells it).
  await em.transactional(async (tem) => {
    if (await tem.nativeDelete(ProjectMember, { id: member.id }))
      await recordMemberEvent(tem, 'project.member_removed', projectId, presentMember(member));
  });
}
