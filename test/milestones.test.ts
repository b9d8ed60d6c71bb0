import { describe, expect, it } from 'vitest';
import { raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import type * as types from '../codegen/generated/api/types.gen.js';
import { Milestone } from '../src/milestones/milestone.entity.js';
import { MAX_MILESTONES } from '../src/milestones/milestones.service.js';

const {
  t,
  users: { ada, grace },
} = useServer({ users: { ada: 'all', grace: 'all' } });

async function project(): Promise<string> {
  const { data } = await api.createProject({ client: ada.client, body: { name: uniqueName('Roadmap') } });
  return data!.id;
}
async function add(projectId: string, title: string, extra: Partial<types.CreateMilestoneData['body']> = {}) {
  const res = await api.createMilestone({ client: ada.client, path: { projectId }, body: { title, ...extra } });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
}
async function order(projectId: string): Promise<string[]> {
  const { data } = await api.listMilestones({ client: grace.client, path: { projectId }, query: { limit: 100 } });
  for (const [i, m] of data!.items.entries()) expect(m.position).toBe(i + 1);
  return data!.items.map((m) => m.title);
}

describe('roadmap', () => {
  it('appends, inserts at a position, moves, and deletes, keeping 1..n', async () => {
    const p = await project();
    const a = await add(p, 'A');
    await add(p, 'B');
    await add(p, 'C');
    expect(a).toMatchObject({
      title: 'A',
      position: 1,
      status: 'planned',
      dueDate: null,
      description: null,
      completedAt: null,
    });
    await add(p, 'Z', { position: 1 });
    expect(await order(p)).toEqual(['Z', 'A', 'B', 'C']);
    // Moved one place down by the insert: its position changed, and so did its updatedAt.
    const shifted = await api.getMilestone({ client: ada.client, path: { projectId: p, milestoneId: a.id } });
    expect(shifted.data!.position).toBe(2);
    expect(Date.parse(shifted.data!.updatedAt)).toBeGreaterThan(Date.parse(a.updatedAt));

    const moved = await api.updateMilestone({
      client: ada.client,
      path: { projectId: p, milestoneId: a.id },
      body: { position: 4 },
    });
    expect(moved.data!.position).toBe(4);
    expect(await order(p)).toEqual(['Z', 'B', 'C', 'A']);
    await api.updateMilestone({ client: ada.client, path: { projectId: p, milestoneId: a.id }, body: { position: 1 } });
    expect(await order(p)).toEqual(['A', 'Z', 'B', 'C']);

    const del = await api.deleteMilestone({ client: ada.client, path: { projectId: p, milestoneId: a.id } });
    expect(del.response?.status).toBe(204);
    expect(await order(p)).toEqual(['Z', 'B', 'C']);
    expect(await t.db.orm.em.fork().count(Milestone, { id: a.id })).toBe(0);
    const again = await api.getMilestone({ client: ada.client, path: { projectId: p, milestoneId: a.id } });
    expect(again.response?.status).toBe(404);

    const far = await api.createMilestone({
      client: ada.client,
      path: { projectId: p },
      body: { title: 'far', position: 9 },
    });
    expect(far.response?.status).toBe(422);
  });

  it('refuses a milestone past the most a roadmap holds with a 409, and takes it again once there is room', async () => {
    const p = await project();
    const first = await add(p, 'first');
    await add(p, 'second');
    // The rest of a full roadmap, straight into the table: 100,000 requests would take minutes.
    await t.db.orm.em.fork().execute(
      `insert into milestones (id, project_id, title, status, position, created_at, updated_at)
       select gen_random_uuid(), ?, 'filler ' || n, 'planned', n, now(), now() from generate_series(3, ?) as n`,
      [p, MAX_MILESTONES],
    );
    const full = await api.createMilestone({
      client: ada.client,
      path: { projectId: p },
      body: { title: 'one too many' },
    });
    expect(full.response?.status).toBe(409);
    expect(full.response?.headers.get('content-type')).toContain('application/problem+json');
    expect(full.error).toMatchObject({ type: '/problems/conflict', code: 'roadmap-full' });
    expect((full.error as { detail: string }).detail).toContain(`the most a roadmap can hold is ${MAX_MILESTONES}`);
    const atFirst = await api.createMilestone({
      client: ada.client,
      path: { projectId: p },
      body: { title: 'one too many', position: 1 },
    });
    expect(atFirst.response?.status).toBe(409);
    const em = t.db.orm.em.fork();
    expect(await em.count(Milestone, { project: p })).toBe(MAX_MILESTONES);
    expect(await em.count(Milestone, { project: p, title: 'one too many' })).toBe(0);
    expect((await em.findOneOrFail(Milestone, first.id)).position).toBe(1);

    const del = await api.deleteMilestone({ client: ada.client, path: { projectId: p, milestoneId: first.id } });
    expect(del.response?.status).toBe(204);
    const last = await add(p, 'last');
    expect(last.position).toBe(MAX_MILESTONES);
  });

  it('keeps omitted fields, clears nullable ones sent as null, and stamps completion', async () => {
    const p = await project();
    const m = await add(p, 'Ship', { description: 'all of it', dueDate: '2026-12-31' });
    const status = await api.updateMilestone({
      client: ada.client,
      path: { projectId: p, milestoneId: m.id },
      body: { status: 'done' },
    });
    expect(status.data).toMatchObject({
      title: 'Ship',
      description: 'all of it',
      dueDate: '2026-12-31',
      status: 'done',
    });
    expect(status.data!.completedAt).not.toBeNull();
    const cleared = await api.updateMilestone({
      client: ada.client,
      path: { projectId: p, milestoneId: m.id },
      body: { dueDate: null, description: null },
    });
    expect(cleared.data).toMatchObject({
      title: 'Ship',
      description: null,
      dueDate: null,
      status: 'done',
      completedAt: status.data!.completedAt,
    });
    // The roadmap (a hand-written read, its timestamps formatted in SQL) shows exactly what the write returned.
    const roadmap = await api.listMilestones({ client: ada.client, path: { projectId: p } });
    expect(roadmap.data!.items).toEqual([cleared.data]);
    const reopened = await api.updateMilestone({
      client: ada.client,
      path: { projectId: p, milestoneId: m.id },
      body: { status: 'in_progress' },
    });
    expect(reopened.data!.completedAt).toBeNull();
  });

  it('reorders the whole roadmap, refusing an incomplete list with 422', async () => {
    const p = await project();
    const ms = [await add(p, 'A'), await add(p, 'B'), await add(p, 'C')];
    const res = await api.reorderMilestones({
      client: ada.client,
      path: { projectId: p },
      body: { milestoneIds: [ms[2]!.id, ms[0]!.id, ms[1]!.id] },
    });
    expect(res.data!.items.map((m) => m.title)).toEqual(['C', 'A', 'B']);
    const partial = await api.reorderMilestones({
      client: ada.client,
      path: { projectId: p },
      body: { milestoneIds: [ms[0]!.id] },
    });
    expect(partial.response?.status).toBe(422);
    expect(await order(p)).toEqual(['C', 'A', 'B']);
  });

  it('reads a private roadmap for its owner and members only, empty or page by page', async () => {
    const { data: secret } = await api.createProject({
      client: ada.client,
      body: { name: uniqueName('Secret'), visibility: 'private' },
    });
    const p = secret!.id;
    const list = (who: TestUser, query: { limit?: number; cursor?: string } = {}) =>
      api.listMilestones({ client: who.client, path: { projectId: p }, query });
    const empty = await list(ada);
    expect(empty.response?.status).toBe(200);
    expect(empty.data).toEqual({ items: [], nextCursor: null });
    for (const title of ['Ember', 'Flint', 'Tinder']) await add(p, title);

    const outsider = await list(grace);
    expect(outsider.response?.status).toBe(404);
    expect(outsider.response?.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.stringify(outsider.error)).not.toContain('Ember');
    // A malformed cursor does not turn the outsider's 404 into a 400; the owner gets the 400.
    expect((await list(grace, { cursor: 'not-a-cursor' })).response?.status).toBe(404);
    expect((await list(ada, { cursor: 'not-a-cursor' })).response?.status).toBe(400);

    await api.addProjectMember({ client: ada.client, path: { projectId: p }, body: { username: grace.user.username } });
    const first = await list(grace, { limit: 2 });
    expect(first.data!.items.map((m) => m.title)).toEqual(['Ember', 'Flint']);
    const rest = await list(grace, { limit: 2, cursor: first.data!.nextCursor! });
    expect(rest.data).toMatchObject({ items: [{ title: 'Tinder', position: 3 }], nextCursor: null });

    const missing = await api.listMilestones({
      client: ada.client,
      path: { projectId: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' },
    });
    expect(missing.response?.status).toBe(404);
  });

  it('reads one milestone as the roadmap lists it, only under its own project and for those who may read it', async () => {
    const { data: secret } = await api.createProject({
      client: ada.client,
      body: { name: uniqueName('Secret'), visibility: 'private' },
    });
    const p = secret!.id;
    await add(p, 'First');
    const done = await add(p, 'Shipped', { status: 'done', description: 'with notes', dueDate: '2026-12-01' });
    const listed = (await api.listMilestones({ client: ada.client, path: { projectId: p } })).data!.items;
    for (const m of listed)
      expect((await api.getMilestone({ client: ada.client, path: { projectId: p, milestoneId: m.id } })).data).toEqual(
        m,
      );
    expect(listed[1]).toMatchObject({
      id: done.id,
      status: 'done',
      description: 'with notes',
      dueDate: '2026-12-01',
      position: 2,
    });
    expect(listed[1]!.completedAt).not.toBeNull();

    // A stranger to the private project, and the milestone asked for under another project: 404.
    expect(
      (await api.getMilestone({ client: grace.client, path: { projectId: p, milestoneId: done.id } })).response?.status,
    ).toBe(404);
    const other = await project();
    const elsewhere = await api.getMilestone({ client: ada.client, path: { projectId: other, milestoneId: done.id } });
    expect(elsewhere.response?.status).toBe(404);
    expect(elsewhere.response?.headers.get('content-type')).toContain('application/problem+json');
    await api.addProjectMember({ client: ada.client, path: { projectId: p }, body: { username: grace.user.username } });
    expect(
      (await api.getMilestone({ client: grace.client, path: { projectId: p, milestoneId: done.id } })).data,
    ).toEqual(listed[1]);
  });

  it('takes a cursor only on the list that returned it: the same project and the same filters', async () => {
    const [a, b] = [await project(), await project()];
    for (const p of [a, b]) for (const title of ['1', '2', '3']) await add(p, title);
    const first = await api.listMilestones({ client: grace.client, path: { projectId: a }, query: { limit: 2 } });
    const cursor = first.data!.nextCursor!;
    const next = await api.listMilestones({
      client: grace.client,
      path: { projectId: a },
      query: { limit: 2, cursor },
    });
    expect(next.data!.items.map((m) => m.title)).toEqual(['3']);
    const mine = await raw(t, 'GET', '/projects?owner=me&limit=1', { token: ada.token });
    for (const path of [
      `/projects/${b}/milestones?cursor=${cursor}`, // another project
      `/projects?cursor=${mine.json.nextCursor}&limit=1`, // other filters (everyone's, not ada's)
    ]) {
      const refused = await raw(t, 'GET', path, { token: ada.token });
      expect(refused.status, path).toBe(400);
      expect(refused.json).toMatchObject({
        type: '/problems/invalid-cursor',
        detail: expect.stringMatching(/belongs to another list/),
      });
    }
    // The projects list refuses it too, as every list refuses another's cursor.
    const foreign = await raw(t, 'GET', `/projects?cursor=${cursor}`, { token: grace.token });
    expect(foreign.json.type).toBe('/problems/invalid-cursor');
  });

  it('walks the roadmap page by page under concurrent moves: no milestone twice, none left out', async () => {
    const p = await project();
    const all: string[] = [];
    for (let i = 1; i <= 40; i++) all.push((await add(p, `M${i}`)).id);
    const move = (id: string, position: number) =>
      api.updateMilestone({ client: ada.client, path: { projectId: p, milestoneId: id }, body: { position } });
    // Someone else keeps reordering for the whole walk.
    let walking = true;
    const mover = (async () => {
      for (let i = 0; walking; i++) await move(all[(i * 7) % all.length]!, ((i * 13) % all.length) + 1);
    })();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await api.listMilestones({
        client: grace.client,
        path: { projectId: p },
        query: { limit: 7, cursor },
      });
      expect(page.response?.status).toBe(200);
      const ids = page.data!.items.map((m) => m.id);
      seen.push(...ids);
      // The moves that broke position cursors: a served one sent to the end, the last one to the top.
      if (ids.length) await move(ids.at(-1)!, all.length);
      await move(all[(pages * 11) % all.length]!, 1);
      if (pages === 1) {
        // A retry of this page serves the same milestones.
        const again = await api.listMilestones({
          client: grace.client,
          path: { projectId: p },
          query: { limit: 7, cursor },
        });
        expect(again.data!.items.map((m) => m.id)).toEqual(ids);
      }
      cursor = page.data!.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    walking = false;
    await mover;
    expect(new Set(seen).size).toBe(seen.length); // none twice
    expect([...seen].sort()).toEqual([...all].sort()); // none left out
    expect(pages).toBeGreaterThanOrEqual(6);
  });

  it('refuses bad input with 400 and changes nothing', async () => {
    const p = await project();
    const m = await add(p, 'A');
    const bad = [
      await raw(t, 'POST', `/projects/${p}/milestones`, { token: ada.token, body: { title: '' } }),
      await raw(t, 'POST', `/projects/${p}/milestones`, {
        token: ada.token,
        body: { title: 'x', dueDate: '31/12/2026' },
      }),
      await raw(t, 'POST', `/projects/${p}/milestones`, { token: ada.token, body: { title: 'x', status: 'maybe' } }),
      await raw(t, 'POST', `/projects/${p}/milestones`, { token: ada.token, body: { title: 'x', position: 0 } }),
      await raw(t, 'PATCH', `/projects/${p}/milestones/${m.id}`, { token: ada.token, body: { projectId: p } }),
      await raw(t, 'PATCH', `/projects/${p}/milestones/${m.id}`, { token: ada.token, body: { title: null } }),
    ];
    expect(bad.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400]);
    expect(await order(p)).toEqual(['A']);
  });

  it('keeps a clean order under 20 concurrent creates', async () => {
    const p = await project();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title: `M${i}` } }),
      ),
    );
    expect(results.map((r) => r.response?.status)).toEqual(Array(20).fill(201));
    const positions = results.map((r) => r.data!.position).sort((a, b) => a - b);
    expect(positions).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect((await order(p)).length).toBe(20);
  });

  it('keeps a clean order under concurrent inserts, moves and deletes', async () => {
    const p = await project();
    const base = [];
    for (let i = 0; i < 6; i++) base.push(await add(p, `B${i}`));
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title: `N${i}`, position: 1 } }),
      ),
      api.updateMilestone({
        client: ada.client,
        path: { projectId: p, milestoneId: base[0]!.id },
        body: { position: 3 },
      }),
      api.updateMilestone({
        client: ada.client,
        path: { projectId: p, milestoneId: base[5]!.id },
        body: { position: 1 },
      }),
      api.deleteMilestone({ client: ada.client, path: { projectId: p, milestoneId: base[2]!.id } }),
    ]);
    const titles = await order(p);
    expect(titles.length).toBe(11);
    expect(new Set(titles).size).toBe(11);
  });

  it('stays a clean order under 50 concurrent creates, moves and reorders, losing no write', async () => {
    const p = await project();
    const base = [];
    for (let i = 0; i < 5; i++) base.push(await add(p, `B${i}`));
    const ids = base.map((m) => m.id);
    const calls = [
      ...Array.from({ length: 35 }, (_, i) =>
        api.createMilestone({
          client: ada.client,
          path: { projectId: p },
          body: { title: `N${i}`, ...(i % 3 ? {} : { position: 1 }) },
        }),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        api.updateMilestone({
          client: ada.client,
          path: { projectId: p, milestoneId: ids[i % 5]! },
          body: { position: (i % 5) + 1 },
        }),
      ),
      ...Array.from({ length: 5 }, () =>
        api.reorderMilestones({
          client: ada.client,
          path: { projectId: p },
          body: { milestoneIds: [...ids].reverse() },
        }),
      ),
    ];
    const results = await Promise.all(calls);
    const statuses = results.map((r) => r.response?.status);
    expect(statuses.slice(0, 35)).toEqual(Array(35).fill(201));
    expect(statuses.slice(35, 45)).toEqual(Array(10).fill(200));
    for (const s of statuses.slice(45)) expect([200, 422]).toContain(s); // a reorder that missed a concurrent create says so
    const titles = await order(p);
    expect(titles.length).toBe(40);
    expect(new Set(titles).size).toBe(40);
  });
});
