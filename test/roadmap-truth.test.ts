/**
 * A roadmap that tells the truth, through REST and MCP as a client meets it: due dates with their
 * history and reasons, overdue said out loud, and the filters a planner needs.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { uniqueName, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';

const {
  t,
  users: { ada, grace },
} = useServer({ users: { ada: 'all', grace: 'all' } });

/** The day `n` days from today (UTC), as YYYY-MM-DD. */
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

async function project(): Promise<string> {
  const { data } = await api.createProject({ client: ada.client, body: { name: uniqueName('Truth') } });
  return data!.id;
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] };
async function mcp(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'truth-test', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools(); // the client checks each structuredContent against its outputSchema from here on
  return {
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

describe('due dates with their history', () => {
  it('shows a date moved twice: how often, how far, both earlier dates and each reason (REST)', async () => {
    const projectId = await project();
    const created = await api.createMilestone({
      client: ada.client,
      path: { projectId },
      body: { title: 'Gears', startDate: '2027-01-01', dueDate: '2027-01-10' },
    });
    const milestoneId = created.data!.id;
    expect(created.data).toMatchObject({ startDate: '2027-01-01', dueDate: '2027-01-10', dueDateHistory: null });
    const path = { projectId, milestoneId };
    const first = await api.updateMilestone({
      client: ada.client,
      path,
      body: { dueDate: '2027-02-01', dueDateReason: 'The supplier is late' },
    });
    expect(first.response?.status).toBe(200);
    await api.updateMilestone({
      client: ada.client,
      path,
      body: { dueDate: '2027-03-01', dueDateReason: 'Tests failed' },
    });

    const read = await api.getMilestone({ client: grace.client, path });
    expect(read.data).toMatchObject({
      dueDate: '2027-03-01',
      overdue: false,
      dueDateHistory: {
        moves: 2,
        slipDays: 50,
        originalDueDate: '2027-01-10',
        earlierDueDates: ['2027-01-10', '2027-02-01'],
        lastReason: 'Tests failed',
      },
    });

    const mine = await api.listMilestoneDueDateChanges({ client: ada.client, path });
    expect(mine.data!.items.map(({ from, to, days, reason }) => ({ from, to, days, reason }))).toEqual([
      { from: '2027-02-01', to: '2027-03-01', days: 28, reason: 'Tests failed' },
      { from: '2027-01-10', to: '2027-02-01', days: 22, reason: 'The supplier is late' },
    ]);
    expect(mine.data!.items[0]!.via).toMatchObject({ channel: 'rest', keyName: expect.any(String) });
    // Another reader of the public roadmap sees the dates and reasons, not the owner's keys.
    const theirs = await api.listMilestoneDueDateChanges({ client: grace.client, path });
    expect(theirs.data!.items.map((c) => c.via)).toEqual([null, null]);
  });

  it('refuses a reason without a move and a start after the due day, with their codes, changing nothing', async () => {
    const projectId = await project();
    const { data: m } = await api.createMilestone({
      client: ada.client,
      path: { projectId },
      body: { title: 'Frame', dueDate: '2027-01-10' },
    });
    const path = { projectId, milestoneId: m!.id };
    const reasonOnly = await api.updateMilestone({ client: ada.client, path, body: { dueDateReason: 'just because' } });
    expect(reasonOnly.response?.status).toBe(422);
    expect(reasonOnly.error).toMatchObject({ code: 'reason-without-date-change' });
    const backwards = await api.updateMilestone({ client: ada.client, path, body: { startDate: '2027-02-01' } });
    expect(backwards.response?.status).toBe(422);
    expect(backwards.error).toMatchObject({ code: 'start-after-due' });
    const badDay = await api.updateMilestone({ client: ada.client, path, body: { dueDate: '2027-02-30' } as never });
    expect(badDay.response?.status).toBe(400);
    const after = await api.getMilestone({ client: ada.client, path });
    expect(after.data).toMatchObject({ startDate: null, dueDate: '2027-01-10', dueDateHistory: null });
    expect((await api.listMilestoneDueDateChanges({ client: ada.client, path })).data!.items).toEqual([]);
  });

  it('answers 404 for the history of a milestone of another project', async () => {
    const projectId = await project();
    const other = await project();
    const { data: m } = await api.createMilestone({ client: ada.client, path: { projectId }, body: { title: 'x' } });
    const res = await api.listMilestoneDueDateChanges({
      client: ada.client,
      path: { projectId: other, milestoneId: m!.id },
    });
    expect(res.response?.status).toBe(404);
  });
});

describe('overdue, said', () => {
  it('marks a milestone due yesterday overdue in REST, and filters the roadmap by it and by status', async () => {
    const projectId = await project();
    const add = (title: string, body: Record<string, unknown>) =>
      api.createMilestone({ client: ada.client, path: { projectId }, body: { title, ...body } });
    await add('Done early', { dueDate: day(-5), status: 'done' });
    const late = (await add('Late', { dueDate: day(-1), status: 'in_progress' })).data!;
    await add('Today', { dueDate: day(0) });
    expect(late.overdue).toBe(true);

    const roadmap = await api.listMilestones({ client: grace.client, path: { projectId } });
    expect(roadmap.data!.items.map((m) => [m.title, m.overdue])).toEqual([
      ['Done early', false],
      ['Late', true],
      ['Today', false],
    ]);
    const overdue = await api.listMilestones({ client: grace.client, path: { projectId }, query: { overdue: true } });
    expect(overdue.data!.items.map((m) => m.title)).toEqual(['Late']);
    const done = await api.listMilestones({ client: grace.client, path: { projectId }, query: { status: 'done' } });
    expect(done.data!.items.map((m) => m.title)).toEqual(['Done early']);
    const bad = await fetch(`${t.apiUrl}/projects/${projectId}/milestones?overdue=maybe`, {
      headers: { authorization: `Bearer ${grace.token}` },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });
});

describe('the same through MCP', () => {
  it('moves a date with a reason, says it on the roadmap, and lists only the overdue milestones', async () => {
    const projectId = await project();
    const agent = await mcp(ada.token);
    const made = await agent.call('create_milestone', { projectId, title: 'Ship v1', dueDate: day(-2) });
    expect(made.isError).toBeFalsy();
    const milestoneId = made.structuredContent.id;
    expect(made.content[0]!.text).toContain(`OVERDUE since ${day(-2)}`);
    const moved = await agent.call('update_milestone', {
      projectId,
      milestoneId,
      dueDate: day(12),
      dueDateReason: 'Waiting for parts',
    });
    expect(moved.isError).toBeFalsy();
    expect(moved.content[0]!.text).toContain(`due ${day(12)} (moved once, +14 days)`);
    expect(moved.structuredContent.dueDateHistory).toMatchObject({ moves: 1, lastReason: 'Waiting for parts' });
    const refused = await agent.call('update_milestone', { projectId, milestoneId, dueDateReason: 'no date' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/dueDateReason/);

    await agent.call('create_milestone', { projectId, title: 'Docs', dueDate: day(-1) });
    const overdue = await agent.call('get_roadmap', { projectId, overdue: true });
    expect(overdue.structuredContent.items.map((m: { title: string }) => m.title)).toEqual(['Docs']);
    expect(overdue.content[0]!.text).toMatch(/^Status: .*\n(.*\n)*1 milestone, overdue, in roadmap order/);

    // The change is kept with the MCP client that made it.
    const history = await api.listMilestoneDueDateChanges({ client: ada.client, path: { projectId, milestoneId } });
    expect(history.data!.items[0]).toMatchObject({
      reason: 'Waiting for parts',
      via: { channel: 'mcp', client: expect.stringContaining('truth-test') },
    });
    await agent.close();
  });
});

describe('health and evidence', () => {
  it('takes health and evidence from a build log (REST): the project, the milestone and the filters say it', async () => {
    const projectId = await project();
    const { data: m } = await api.createMilestone({
      client: ada.client,
      path: { projectId },
      body: { title: 'Engine' },
    });
    const links = [{ url: 'https://github.com/ada/engine/commit/1f2e3d4', kind: 'commit' as const }];
    const posted = await api.createPost({
      client: ada.client,
      body: {
        kind: 'build_log',
        projectId,
        title: 'Slow week',
        body: 'Parts late.',
        health: 'at_risk',
        milestoneIds: [m!.id],
        links,
      },
    });
    expect(posted.response?.status).toBe(201);
    expect(posted.data).toMatchObject({ health: 'at_risk', milestoneIds: [m!.id], links });

    const read = await api.getProject({ client: grace.client, path: { projectId } });
    expect(read.data).toMatchObject({
      health: { status: 'at_risk', buildLogId: posted.data!.id, setAt: posted.data!.createdAt },
      lastBuildLogAt: posted.data!.createdAt,
      daysSinceLastBuildLog: 0,
      stale: false,
    });
    const milestone = await api.getMilestone({ client: grace.client, path: { projectId, milestoneId: m!.id } });
    expect(milestone.data).toMatchObject({ buildLogCount: 1, lastBuildLogAt: posted.data!.createdAt });
    const risky = await api.listProjects({ client: ada.client, query: { owner: 'me', health: 'at_risk' } });
    expect(risky.data!.items.map((p) => p.id)).toContain(projectId);
    const calm = await api.listProjects({ client: ada.client, query: { owner: 'me', health: 'on_track' } });
    expect(calm.data!.items.map((p) => p.id)).not.toContain(projectId);
  });

  it('refuses a milestone of another project, a plain post with health, an unknown health and a link that is not https', async () => {
    const projectId = await project();
    const other = await project();
    const { data: theirs } = await api.createMilestone({
      client: ada.client,
      path: { projectId: other },
      body: { title: 'x' },
    });
    const foreign = await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId, title: 't', body: 'b', milestoneIds: [theirs!.id] },
    });
    expect(foreign.response?.status).toBe(422);
    expect(foreign.error).toMatchObject({ code: 'unknown-milestone' });
    const plain = await api.createPost({ client: ada.client, body: { title: 't', body: 'b', health: 'on_track' } });
    expect(plain.response?.status).toBe(400);
    expect(plain.error).toMatchObject({ errors: [{ path: '/body/health' }] });
    for (const body of [
      { health: 'fine' },
      { links: [{ url: 'http://example.com/x', kind: 'commit' }] },
      { links: [{ url: 'https://example.com/x', kind: 'tag' }] },
    ]) {
      const res = await api.createPost({
        client: ada.client,
        body: { kind: 'build_log', projectId, title: 't', body: 'b', ...body } as never,
      });
      expect(res.response?.status, JSON.stringify(body)).toBe(400);
    }
    const after = await api.getProject({ client: ada.client, path: { projectId } });
    expect(after.data).toMatchObject({ health: null, lastBuildLogAt: null });
  });
});

describe('the loop an agent runs, read back', () => {
  it('posts a build log at risk naming a milestone, moves its date with a reason, and reads the status first', async () => {
    const projectId = await project();
    const agent = await mcp(ada.token);
    const late = (await agent.call('create_milestone', { projectId, title: 'Late one', dueDate: day(-3) }))
      .structuredContent;
    const next = (await agent.call('create_milestone', { projectId, title: 'Next one', dueDate: day(5) }))
      .structuredContent;
    const logged = await agent.call('create_build_log', {
      projectId,
      title: 'Gearbox slips',
      body: 'Supplier is two weeks out.',
      health: 'at_risk',
      // An id in capitals is the same id, kept as PostgreSQL writes it.
      milestoneIds: [next.id.toUpperCase()],
      links: [{ url: 'https://github.com/ada/engine/pull/7', kind: 'pull_request' }],
    });
    expect(logged.isError).toBeFalsy();
    expect(logged.structuredContent.milestoneIds).toEqual([next.id]);
    expect(logged.content[0]!.text).toMatch(
      /^Posted the build log "Gearbox slips", health at_risk, moving 1 milestone forward/,
    );
    const moved = await agent.call('update_milestone', {
      projectId,
      milestoneId: next.id,
      dueDate: day(19),
      dueDateReason: 'Supplier two weeks out',
    });
    expect(moved.isError).toBeFalsy();

    const mine = await agent.call('list_my_projects', {});
    expect(mine.content[0]!.text).toMatch(/you own, newest first \(.*\d+ at risk/);
    expect(mine.structuredContent.items.find((p: { id: string }) => p.id === projectId).health.status).toBe('at_risk');

    const roadmap = await agent.call('get_roadmap', { projectId });
    const lines = roadmap.content[0]!.text.split('\n');
    expect(lines[0]).toBe('Status: at risk, reported today; last build log today.');
    expect(lines[1]).toBe(`Overdue: 1: 1. Late one (due ${day(-3)}, 3 days late).`);
    expect(lines[2]).toBe(`Next due: 2. Next one on ${day(19)} (in 19 days).`);
    expect(lines[3]).toBe('Slipped: 1 open milestone moved its due date; 2. Next one moved once, +14 days.');
    expect(lines[4]).toMatch(/^2 milestones, in roadmap order/);
    const [first, second] = roadmap.structuredContent.items;
    expect(first).toMatchObject({ id: late.id, overdue: true });
    expect(second).toMatchObject({
      buildLogCount: 1,
      dueDateHistory: { moves: 1, lastReason: 'Supplier two weeks out' },
    });
    await agent.close();

    // A reader who is not the owner gets the same status, the milestones named by position only.
    const reader = await mcp(grace.token);
    const theirs = (await reader.call('get_roadmap', { projectId })).content[0]!.text.split('\n');
    expect(theirs[1]).toBe(`Overdue: 1: milestone 1 (due ${day(-3)}, 3 days late).`);
    expect(theirs.slice(0, 4).join('\n')).not.toMatch(/Late one|Next one/);
    await reader.close();
  });
});
