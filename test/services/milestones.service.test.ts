/**
 * The roadmap's rules at the service, without a server: who may change it, positions that stay
 * 1..n, and the event a change records for a subscription, carrying the answer the change gave.
 */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import { createProject, updateProject } from '../../src/projects/projects.service.js';
import { roadmapStatus } from '../../src/milestones/roadmap-status.js';
import { addMember } from '../../src/projects/members.service.js';
import {
  createMilestone,
  deleteMilestone,
  listMilestones,
  reorderMilestones,
  updateMilestone,
} from '../../src/milestones/milestones.service.js';
import { createWebhook } from '../../src/webhooks/webhooks.service.js';
import { SecretBox } from '../../src/webhooks/secrets.js';
import { WebhookEvent } from '../../src/outbox/event.entity.js';

const db = useServiceDatabase();
const settings = { box: new SecretBox(Buffer.alloc(32, 7)), urls: { allowLocal: true } };

async function roadmap() {
  const owner = await db.user();
  const project = await createProject(db.em(), owner.actor, { name: 'Roadmap' });
  return { owner, projectId: project.id };
}
const positions = async (actor: Parameters<typeof listMilestones>[1], projectId: string) =>
  (await listMilestones(db.em(), actor, projectId, { limit: 100 })).items.map((m) => [m.title, m.position]);

describe('the roadmap at the service', () => {
  it('keeps positions 1..n through inserts, moves and deletes', async () => {
    const { owner, projectId } = await roadmap();
    const a = await createMilestone(db.em(), owner.actor, projectId, { title: 'a' });
    const b = await createMilestone(db.em(), owner.actor, projectId, { title: 'b' });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'first', position: 1 });
    expect(await positions(owner.actor, projectId)).toEqual([
      ['first', 1],
      ['a', 2],
      ['b', 3],
    ]);
    await updateMilestone(db.em(), owner.actor, projectId, b.id, { position: 1 });
    await deleteMilestone(db.em(), owner.actor, projectId, a.id);
    expect(await positions(owner.actor, projectId)).toEqual([
      ['b', 1],
      ['first', 2],
    ]);
  });

  it('refuses a position past the end, and a reorder that does not name each milestone once', async () => {
    const { owner, projectId } = await roadmap();
    const a = await createMilestone(db.em(), owner.actor, projectId, { title: 'a' });
    expect(await refusal(createMilestone(db.em(), owner.actor, projectId, { title: 'x', position: 3 }))).toEqual({
      status: 422,
      code: 'position-out-of-range',
    });
    expect(await refusal(updateMilestone(db.em(), owner.actor, projectId, a.id, { position: 2 }))).toEqual({
      status: 422,
      code: 'position-out-of-range',
    });
    expect(await refusal(reorderMilestones(db.em(), owner.actor, projectId, [a.id, a.id], 100))).toEqual({
      status: 422,
      code: 'roadmap-order-mismatch',
    });
  });

  it('lets only the owner change it: a member is told that members post build logs', async () => {
    const { owner, projectId } = await roadmap();
    const member = await db.user();
    await addMember(db.em(), owner.actor, projectId, member.user.username);
    expect(await refusal(createMilestone(db.em(), member.actor, projectId, { title: 'mine' }))).toEqual({
      status: 403,
      code: 'member-not-owner',
    });
    const stranger = await db.user();
    expect(await refusal(createMilestone(db.em(), stranger.actor, projectId, { title: 'mine' }))).toEqual({
      status: 403,
      code: 'stranger-not-owner',
    });
    // Nor may a member change or delete the owner's milestone.
    const kept = await createMilestone(db.em(), owner.actor, projectId, { title: 'kept' });
    expect(await refusal(updateMilestone(db.em(), member.actor, projectId, kept.id, { title: 'mine' }))).toEqual({
      status: 403,
      code: 'member-not-owner',
    });
    expect(await refusal(deleteMilestone(db.em(), member.actor, projectId, kept.id))).toEqual({
      status: 403,
      code: 'member-not-owner',
    });
    expect(await positions(owner.actor, projectId)).toEqual([['kept', 1]]);
  });

  it("reads a private roadmap with a status's checked access for that project and caller only", async () => {
    const { owner, projectId } = await roadmap();
    await updateProject(db.em(), owner.actor, projectId, { visibility: 'private' });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'secret' });
    const mine = await createProject(db.em(), (await db.user()).actor, { name: 'Other' });
    const stranger = await db.user();
    expect(await refusal(roadmapStatus(db.em(), stranger.actor, projectId))).toEqual({
      status: 404,
      code: 'unknown-project',
    });
    expect(await refusal(roadmapStatus(db.em(), stranger.actor, 'not-a-uuid'))).toEqual({
      status: 404,
      code: 'unknown-project',
    });
    // The owner's checked access, handed to another caller or for another project, is checked again.
    const { access } = await roadmapStatus(db.em(), owner.actor, projectId);
    expect(access).toMatchObject({ projectId, role: 'owner', owner: { id: owner.user.id } });
    expect(
      (await listMilestones(db.em(), owner.actor, projectId, { limit: 10 }, undefined, access)).items,
    ).toHaveLength(1);
    expect(await refusal(listMilestones(db.em(), stranger.actor, projectId, { limit: 10 }, undefined, access))).toEqual(
      {
        status: 404,
        code: 'unknown-project',
      },
    );
    const seen: unknown[] = [];
    await listMilestones(db.em(), owner.actor, mine.id, { limit: 10 }, (a) => seen.push(a), access);
    expect(seen).toEqual([{ owner: expect.objectContaining({ id: mine.owner.id }), role: 'none' }]);
  });

  it('records an event only for a subscription, with the very answer the change gave', async () => {
    const { owner, projectId } = await roadmap();
    await createMilestone(db.em(), owner.actor, projectId, { title: 'unheard' });
    expect(await db.em().count(WebhookEvent, {})).toBe(0);
    await createWebhook(
      db.em(),
      owner.actor,
      projectId,
      { url: 'http://127.0.0.1:9/hook', events: ['milestone.created'] },
      settings,
    );
    const made = await createMilestone(db.em(), owner.actor, projectId, { title: 'heard', description: 'd' });
    const [event] = await db.em().find(WebhookEvent, {});
    expect(event!.type).toBe('milestone.created');
    expect(JSON.parse(event!.data).milestone).toEqual(made);
    // Not subscribed to updates: none recorded.
    await updateMilestone(db.em(), owner.actor, projectId, made.id, { title: 'renamed' });
    expect(await db.em().count(WebhookEvent, {})).toBe(1);
  });
});
