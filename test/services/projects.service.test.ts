/** Who may see and change a project, and what its members may do: at the service, without a server. */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  updateProject,
} from '../../src/projects/projects.service.js';
import { addMember, listMembers, removeMember } from '../../src/projects/members.service.js';
import { createMilestone, listMilestones } from '../../src/milestones/milestones.service.js';
import { listBuildLogs } from '../../src/posts/posts.service.js';

const db = useServiceDatabase();

describe('projects at the service', () => {
  it("answers in the contract's shape, and refuses a slug its owner already uses", async () => {
    const { user, actor } = await db.user();
    const project = await createProject(db.em(), actor, { name: 'Analytical Engine' });
    expect(project).toMatchObject({ name: 'Analytical Engine', slug: 'analytical-engine', owner: { id: user.id } });
    expect(await refusal(createProject(db.em(), actor, { name: 'x', slug: project.slug }))).toEqual({
      status: 409,
      code: 'project-slug-taken',
    });
    const other = await db.user();
    expect(await refusal(createProject(db.em(), other.actor, { name: 'x', slug: project.slug }))).toBe('allowed');
  });

  it('lets only the owner change a project: a member and a stranger are told which they are', async () => {
    const owner = await db.user();
    const member = await db.user();
    const stranger = await db.user();
    const { id } = await createProject(db.em(), owner.actor, { name: 'Kept' });
    await addMember(db.em(), owner.actor, id, member.user.username);
    expect(await refusal(updateProject(db.em(), member.actor, id, { tagline: 'mine' }))).toEqual({
      status: 403,
      code: 'member-not-owner',
    });
    expect(await refusal(updateProject(db.em(), stranger.actor, id, { tagline: 'mine' }))).toEqual({
      status: 403,
      code: 'stranger-not-owner',
    });
    expect(await refusal(deleteProject(db.em(), member.actor, id))).toEqual({ status: 403, code: 'member-not-owner' });
    expect(await refusal(deleteProject(db.em(), stranger.actor, id))).toEqual({
      status: 403,
      code: 'stranger-not-owner',
    });
    expect((await updateProject(db.em(), owner.actor, id, { tagline: 'ours' })).tagline).toBe('ours');
  });

  it('hides a private project from everyone but its owner and members', async () => {
    const owner = await db.user();
    const member = await db.user();
    const stranger = await db.user();
    const { id } = await createProject(db.em(), owner.actor, { name: 'Secret', visibility: 'private' });
    await addMember(db.em(), owner.actor, id, member.user.username);
    expect((await getProject(db.em(), member.actor, id)).id).toBe(id);
    expect(await refusal(getProject(db.em(), stranger.actor, id))).toEqual({ status: 404, code: 'unknown-project' });
    // A stranger cannot learn it exists by trying to change it, or by any of its lists, either.
    const unknown = { status: 404, code: 'unknown-project' };
    expect(await refusal(updateProject(db.em(), stranger.actor, id, { name: 'x' }))).toEqual(unknown);
    expect(await refusal(createMilestone(db.em(), stranger.actor, id, { title: 'x' }))).toEqual(unknown);
    expect(await refusal(listMilestones(db.em(), stranger.actor, id, { limit: 10 }))).toEqual(unknown);
    expect(await refusal(listMembers(db.em(), stranger.actor, id, { limit: 10 }))).toEqual(unknown);
    expect(await refusal(listBuildLogs(db.em(), stranger.actor, id, { limit: 10 }))).toEqual(unknown);
    // Its owner's list shows it to a member, not to a stranger.
    const listed = async (actor: typeof owner.actor) =>
      (await listProjects(db.em(), actor, { owner: owner.user.username, limit: 100 })).items.map((p) => p.id);
    expect(await listed(member.actor)).toContain(id);
    expect(await listed(stranger.actor)).not.toContain(id);
  });

  it('adds a member once, never the owner, and lets a member leave but not remove others', async () => {
    const owner = await db.user();
    const a = await db.user();
    const b = await db.user();
    const { id } = await createProject(db.em(), owner.actor, { name: 'Crew' });
    expect((await addMember(db.em(), owner.actor, id, a.user.username)).user.username).toBe(a.user.username);
    expect(await refusal(addMember(db.em(), owner.actor, id, a.user.username))).toEqual({
      status: 409,
      code: 'already-member',
    });
    expect(await refusal(addMember(db.em(), owner.actor, id, owner.user.username))).toEqual({
      status: 409,
      code: 'already-owner',
    });
    expect(await refusal(addMember(db.em(), owner.actor, id, 'nobody-by-that-name'))).toEqual({
      status: 422,
      code: 'unknown-user',
    });
    await addMember(db.em(), owner.actor, id, b.user.username);
    expect(await refusal(removeMember(db.em(), a.actor, id, b.user.username))).toEqual({
      status: 403,
      code: 'not-owner-of-members',
    });
    expect(await refusal(removeMember(db.em(), owner.actor, id, owner.user.username))).toEqual({
      status: 409,
      code: 'owner-not-removable',
    });
    expect(await refusal(removeMember(db.em(), a.actor, id, a.user.username))).toBe('allowed');
  });

  // Last: the tests above made users and projects, and none of them is left.
  it('starts each test on an empty database', async () => {
    const { actor } = await db.user();
    expect((await createProject(db.em(), actor, { name: 'First' })).slug).toBe('first');
    const count = (table: string) => db.em().getConnection().execute(`select count(*)::int as n from ${table}`);
    expect(await count('projects')).toEqual([{ n: 1 }]);
    expect(await count('users')).toEqual([{ n: 1 }]);
  });
});
