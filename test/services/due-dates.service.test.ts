/**
 * A milestone's dates at the service: the due date's history (every move kept, the milestone
 * telling how often and how far), the start not after the due day, a reason only with a move,
 * overdue derived from the day, and the event a move records.
 */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import { createProject } from '../../src/projects/projects.service.js';
import { addMember } from '../../src/projects/members.service.js';
import { createMilestone, listMilestones, updateMilestone } from '../../src/milestones/milestones.service.js';
import { listDueDateChanges } from '../../src/milestones/due-dates.service.js';
import { createWebhook } from '../../src/webhooks/webhooks.service.js';
import { SecretBox } from '../../src/webhooks/secrets.js';
import { WebhookEvent } from '../../src/outbox/event.entity.js';

const db = useServiceDatabase();
const settings = { box: new SecretBox(Buffer.alloc(32, 7)), urls: { allowLocal: true } };

/** The day `n` days from today (UTC), as YYYY-MM-DD. */
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

async function roadmap() {
  const owner = await db.user();
  const actor = { ...owner.actor, keyName: 'Laptop agent' };
  const project = await createProject(db.em(), actor, { name: 'Dates' });
  return { owner: { ...owner, actor }, projectId: project.id };
}

describe("a milestone's dates at the service", () => {
  it('keeps every move of the due date: the milestone says how often and how far, the history says each', async () => {
    const { owner, projectId } = await roadmap();
    const m = await createMilestone(db.em(), owner.actor, projectId, { title: 'Gears', dueDate: '2027-01-10' });
    expect(m.dueDateHistory).toBeNull();
    await updateMilestone(
      db.em(),
      owner.actor,
      projectId,
      m.id,
      { dueDate: '2027-02-01', dueDateReason: 'Supplier late' },
      {
        channel: 'mcp',
        client: 'claude-code 2.1.0',
      },
    );
    const moved = await updateMilestone(
      db.em(),
      owner.actor,
      projectId,
      m.id,
      { dueDate: '2027-03-01' },
      { channel: 'rest' },
    );
    expect(moved.dueDate).toBe('2027-03-01');
    expect(moved.dueDateHistory).toMatchObject({
      moves: 2,
      slipDays: 50,
      originalDueDate: '2027-01-10',
      earlierDueDates: ['2027-01-10', '2027-02-01'],
      lastReason: null,
    });
    expect(Date.parse(moved.dueDateHistory!.lastMovedAt!)).toBeGreaterThan(Date.now() - 60_000);

    const history = await listDueDateChanges(db.em(), owner.actor, projectId, m.id, { limit: 10 });
    expect(history.items.map(({ from, to, days, reason, via }) => ({ from, to, days, reason, via }))).toEqual([
      {
        from: '2027-02-01',
        to: '2027-03-01',
        days: 28,
        reason: null,
        via: { keyName: 'Laptop agent', channel: 'rest', client: null },
      },
      {
        from: '2027-01-10',
        to: '2027-02-01',
        days: 22,
        reason: 'Supplier late',
        via: { keyName: 'Laptop agent', channel: 'mcp', client: 'claude-code 2.1.0' },
      },
    ]);
    // A page of one continues where it stopped.
    const first = await listDueDateChanges(db.em(), owner.actor, projectId, m.id, { limit: 1 });
    const second = await listDueDateChanges(db.em(), owner.actor, projectId, m.id, {
      limit: 1,
      cursor: first.nextCursor!,
    });
    expect([...first.items, ...second.items].map((c) => c.to)).toEqual(['2027-03-01', '2027-02-01']);
    expect(second.nextCursor).toBeNull();
  });

  it('shows which key made a change to the owner only', async () => {
    const { owner, projectId } = await roadmap();
    const member = await db.user();
    await addMember(db.em(), owner.actor, projectId, member.user.username);
    const m = await createMilestone(db.em(), owner.actor, projectId, { title: 'Frame', dueDate: '2027-01-10' });
    await updateMilestone(
      db.em(),
      owner.actor,
      projectId,
      m.id,
      { dueDate: '2027-01-20' },
      { channel: 'mcp', client: 'cursor' },
    );
    const seen = await listDueDateChanges(db.em(), member.actor, projectId, m.id, { limit: 10 });
    expect(seen.items).toHaveLength(1);
    expect(seen.items[0]).toMatchObject({ from: '2027-01-10', to: '2027-01-20', days: 10, via: null });
  });

  it('does not count a first date as a move, and counts a cleared one', async () => {
    const { owner, projectId } = await roadmap();
    const m = await createMilestone(db.em(), owner.actor, projectId, { title: 'Someday' });
    const dated = await updateMilestone(db.em(), owner.actor, projectId, m.id, { dueDate: '2027-05-01' });
    expect(dated.dueDateHistory).toBeNull();
    const cleared = await updateMilestone(db.em(), owner.actor, projectId, m.id, {
      dueDate: null,
      dueDateReason: 'On hold',
    });
    expect(cleared.dueDateHistory).toMatchObject({
      moves: 1,
      originalDueDate: '2027-05-01',
      slipDays: null,
      earlierDueDates: ['2027-05-01'],
      lastReason: 'On hold',
    });
    const history = await listDueDateChanges(db.em(), owner.actor, projectId, m.id, { limit: 10 });
    expect(history.items.map((c) => [c.from, c.to])).toEqual([
      ['2027-05-01', null],
      [null, '2027-05-01'],
    ]);
  });

  it('refuses a start after the due day and a reason without a move, and changes nothing', async () => {
    const { owner, projectId } = await roadmap();
    expect(
      await refusal(
        createMilestone(db.em(), owner.actor, projectId, {
          title: 'x',
          startDate: '2027-02-02',
          dueDate: '2027-02-01',
        }),
      ),
    ).toEqual({ status: 422, code: 'start-after-due' });
    const m = await createMilestone(db.em(), owner.actor, projectId, {
      title: 'y',
      startDate: '2027-01-01',
      dueDate: '2027-02-01',
    });
    expect(await refusal(updateMilestone(db.em(), owner.actor, projectId, m.id, { dueDate: '2026-12-31' }))).toEqual({
      status: 422,
      code: 'start-after-due',
    });
    expect(await refusal(updateMilestone(db.em(), owner.actor, projectId, m.id, { dueDateReason: 'why' }))).toEqual({
      status: 422,
      code: 'reason-without-date-change',
    });
    expect(
      await refusal(
        updateMilestone(db.em(), owner.actor, projectId, m.id, { dueDate: '2027-02-01', dueDateReason: 'same day' }),
      ),
    ).toEqual({ status: 422, code: 'reason-without-date-change' });
    const [after] = (await listMilestones(db.em(), owner.actor, projectId, { limit: 10 })).items;
    expect(after).toMatchObject({ startDate: '2027-01-01', dueDate: '2027-02-01', dueDateHistory: null });
    expect((await listDueDateChanges(db.em(), owner.actor, projectId, m.id, { limit: 10 })).items).toEqual([]);
  });

  it('says overdue from the day in UTC, never of a done or cancelled milestone, and filters by it', async () => {
    const { owner, projectId } = await roadmap();
    const late = await createMilestone(db.em(), owner.actor, projectId, { title: 'late', dueDate: day(-1) });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'today', dueDate: day(0) });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'done late', dueDate: day(-3), status: 'done' });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'dropped', dueDate: day(-3), status: 'cancelled' });
    await createMilestone(db.em(), owner.actor, projectId, { title: 'undated' });
    const all = (await listMilestones(db.em(), owner.actor, projectId, { limit: 10 })).items;
    expect(all.map((m) => [m.title, m.overdue])).toEqual([
      ['late', true],
      ['today', false],
      ['done late', false],
      ['dropped', false],
      ['undated', false],
    ]);
    const overdue = await listMilestones(db.em(), owner.actor, projectId, { limit: 10, overdue: true });
    expect(overdue.items.map((m) => m.id)).toEqual([late.id]);
    const others = await listMilestones(db.em(), owner.actor, projectId, { limit: 10, overdue: false });
    expect(others.items.map((m) => m.title)).toEqual(['today', 'done late', 'dropped', 'undated']);
    // Paging an overdue-only roadmap keeps to it.
    await createMilestone(db.em(), owner.actor, projectId, { title: 'later late', dueDate: day(-2) });
    const page = await listMilestones(db.em(), owner.actor, projectId, { limit: 1, overdue: true });
    const rest = await listMilestones(db.em(), owner.actor, projectId, {
      limit: 5,
      overdue: true,
      cursor: page.nextCursor!,
    });
    expect([...page.items, ...rest.items].map((m) => m.title)).toEqual(['late', 'later late']);
  });

  it('tells a subscription that the due date moved, from where to where and why', async () => {
    const { owner, projectId } = await roadmap();
    await createWebhook(
      db.em(),
      owner.actor,
      projectId,
      { url: 'http://127.0.0.1:9/hook', events: ['milestone.updated'] },
      settings,
    );
    const m = await createMilestone(db.em(), owner.actor, projectId, { title: 'Ship', dueDate: '2027-01-10' });
    await updateMilestone(db.em(), owner.actor, projectId, m.id, { dueDate: '2027-01-31', dueDateReason: 'Parts' });
    const [event] = await db.em().find(WebhookEvent, { projectId, type: 'milestone.updated' });
    expect(JSON.parse(event!.data)).toMatchObject({
      changed: ['dueDate'],
      dueDateMove: { from: '2027-01-10', to: '2027-01-31', reason: 'Parts' },
      milestone: { dueDate: '2027-01-31', dueDateHistory: { moves: 1, slipDays: 21 } },
    });
  });
});
