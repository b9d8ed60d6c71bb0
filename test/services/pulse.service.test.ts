/**
 * A project's pulse and the roadmap's evidence at the service: the health a build log reports
 * (a member's too), the project's newest build log, the milestones a build log moved forward,
 * and all of it read again when a build log goes (deleted, hidden) or a milestone does.
 */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import { createProject, deleteProject, getProject, listProjects } from '../../src/projects/projects.service.js';
import { addMember } from '../../src/projects/members.service.js';
import { createMilestone, deleteMilestone, getMilestone } from '../../src/milestones/milestones.service.js';
import { createPost, deletePost, getPost } from '../../src/posts/posts.service.js';
import { setPostHidden } from '../../src/moderation/moderation.service.js';
import { createWebhook } from '../../src/webhooks/webhooks.service.js';
import { SecretBox } from '../../src/webhooks/secrets.js';
import { WebhookEvent } from '../../src/outbox/event.entity.js';
import { User } from '../../src/users/user.entity.js';

const db = useServiceDatabase();
const settings = { box: new SecretBox(Buffer.alloc(32, 7)), urls: { allowLocal: true } };

async function project() {
  const owner = await db.user();
  const { id } = await createProject(db.em(), owner.actor, { name: 'Pulse' });
  return { owner, projectId: id };
}
const log = (projectId: string, extra: Record<string, unknown> = {}) => ({
  kind: 'build_log' as const,
  projectId,
  title: 'Progress',
  body: 'Did things.',
  ...extra,
});

describe("a project's pulse at the service", () => {
  it('takes the health from the newest build log that gives one, a member’s too, and tells a subscription', async () => {
    const { owner, projectId } = await project();
    const fresh = await getProject(db.em(), owner.actor, projectId);
    expect(fresh).toMatchObject({ health: null, lastBuildLogAt: null, daysSinceLastBuildLog: null, stale: false });
    await createWebhook(
      db.em(),
      owner.actor,
      projectId,
      { url: 'http://127.0.0.1:9/hook', events: ['build_log.created'] },
      settings,
    );
    const member = await db.user();
    await addMember(db.em(), owner.actor, projectId, member.user.username);

    const atRisk = await createPost(db.em(), member.actor, log(projectId, { health: 'at_risk' }));
    expect(atRisk.health).toBe('at_risk');
    const quiet = await createPost(db.em(), owner.actor, log(projectId));
    const read = await getProject(db.em(), owner.actor, projectId);
    expect(read.health).toEqual({ status: 'at_risk', setAt: atRisk.createdAt, buildLogId: atRisk.id });
    expect(read).toMatchObject({ lastBuildLogAt: quiet.createdAt, daysSinceLastBuildLog: 0, stale: false });
    // The project's own updatedAt is its owner's edits, not its build logs.
    expect(read.updatedAt).toBe(fresh.updatedAt);

    await createPost(db.em(), owner.actor, log(projectId, { health: 'on_track' }));
    expect((await getProject(db.em(), owner.actor, projectId)).health?.status).toBe('on_track');

    const events = await db
      .em()
      .find(WebhookEvent, { projectId, type: 'build_log.created' }, { orderBy: { id: 'asc' } });
    expect(events.map((e) => JSON.parse(e.data).healthChange)).toEqual([
      { from: null, to: 'at_risk' },
      null,
      { from: 'at_risk', to: 'on_track' },
    ]);
  });

  it('reads the health again when the build log that gave it is deleted or hidden', async () => {
    const { owner, projectId } = await project();
    const first = await createPost(db.em(), owner.actor, log(projectId, { health: 'off_track' }));
    const second = await createPost(db.em(), owner.actor, log(projectId, { health: 'at_risk' }));
    await deletePost(db.em(), owner.actor, second.id);
    expect((await getProject(db.em(), owner.actor, projectId)).health).toMatchObject({
      status: 'off_track',
      buildLogId: first.id,
    });

    const admin = await db.user();
    await db.em().nativeUpdate(User, { id: admin.user.id }, { isAdmin: true });
    const session = { ...admin.actor, via: 'session' as const, keyId: undefined };
    await setPostHidden(db.em(), session, first.id, true);
    expect(await getProject(db.em(), owner.actor, projectId)).toMatchObject({ health: null, lastBuildLogAt: null });
    await setPostHidden(db.em(), session, first.id, false);
    expect((await getProject(db.em(), owner.actor, projectId)).health?.status).toBe('off_track');
  });

  it('lists the projects of one health', async () => {
    const { owner, projectId } = await project();
    const { id: calm } = await createProject(db.em(), owner.actor, { name: 'Calm' });
    await createPost(db.em(), owner.actor, log(projectId, { health: 'at_risk' }));
    await createPost(db.em(), owner.actor, log(calm, { health: 'on_track' }));
    const risky = await listProjects(db.em(), owner.actor, { owner: 'me', health: 'at_risk', limit: 10 });
    expect(risky.items.map((p) => p.id)).toEqual([projectId]);
  });

  it('refuses a plain post that reports on a project, and changes nothing', async () => {
    const { owner } = await project();
    expect(await refusal(createPost(db.em(), owner.actor, { title: 'x', body: 'y', health: 'at_risk' }))).toEqual({
      status: 400,
      code: 'validation',
    });
  });
});

describe("the roadmap's evidence at the service", () => {
  it('counts the build logs that name a milestone, and forgets them as they go', async () => {
    const { owner, projectId } = await project();
    const a = await createMilestone(db.em(), owner.actor, projectId, { title: 'A' });
    const b = await createMilestone(db.em(), owner.actor, projectId, { title: 'B' });
    const links = [{ url: 'https://github.com/ada/engine/pull/42', kind: 'pull_request' as const }];
    const one = await createPost(db.em(), owner.actor, log(projectId, { milestoneIds: [a.id, b.id], links }));
    expect(one).toMatchObject({ milestoneIds: [a.id, b.id], links });
    const two = await createPost(db.em(), owner.actor, log(projectId, { milestoneIds: [a.id] }));
    expect(await getMilestone(db.em(), owner.actor, projectId, a.id)).toMatchObject({
      buildLogCount: 2,
      lastBuildLogAt: two.createdAt,
    });
    expect((await getMilestone(db.em(), owner.actor, projectId, b.id)).buildLogCount).toBe(1);

    await deletePost(db.em(), owner.actor, two.id);
    expect(await getMilestone(db.em(), owner.actor, projectId, a.id)).toMatchObject({
      buildLogCount: 1,
      lastBuildLogAt: one.createdAt,
    });
    await deleteMilestone(db.em(), owner.actor, projectId, b.id);
    expect((await getPost(db.em(), owner.actor, one.id)).milestoneIds).toEqual([a.id]);
  });

  it('leaves a build log whose project was deleted a plain post, reporting on nothing', async () => {
    const { owner, projectId } = await project();
    const m = await createMilestone(db.em(), owner.actor, projectId, { title: 'A' });
    const made = await createPost(db.em(), owner.actor, log(projectId, { health: 'at_risk', milestoneIds: [m.id] }));
    await deleteProject(db.em(), owner.actor, projectId);
    expect(await getPost(db.em(), owner.actor, made.id)).toMatchObject({
      projectId: null,
      health: null,
      milestoneIds: [],
    });
  });

  it('refuses a milestone of another project with its code, and posts nothing', async () => {
    const { owner, projectId } = await project();
    const other = await createProject(db.em(), owner.actor, { name: 'Other' });
    const foreign = await createMilestone(db.em(), owner.actor, other.id, { title: 'Theirs' });
    expect(await refusal(createPost(db.em(), owner.actor, log(projectId, { milestoneIds: [foreign.id] })))).toEqual({
      status: 422,
      code: 'unknown-milestone',
    });
    expect((await getProject(db.em(), owner.actor, projectId)).lastBuildLogAt).toBeNull();
    expect((await getMilestone(db.em(), owner.actor, other.id, foreign.id)).buildLogCount).toBe(0);
  });
});
