import { describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import type * as types from '../codegen/generated/api/types.gen.js';
import { Project } from '../src/projects/project.entity.js';

const {
  t,
  users: { ada, grace, eve },
} = useServer({ users: { ada: 'all', grace: 'all', eve: 'all' } });

const newProject = async (who: TestUser, extra: Partial<types.CreateProjectData['body']> = {}) => {
  const { data, error, response } = await api.createProject({
    client: who.client,
    body: { name: uniqueName('Engine'), ...extra },
  });
  expect(error, JSON.stringify(error)).toBeUndefined();
  expect(response?.status).toBe(201);
  return data!;
};

describe('projects', () => {
  it('creates, reads, updates and deletes a project through the SDK', async () => {
    const created = await newProject(ada, {
      name: 'Analytical Engine',
      tags: ['Hardware', 'hardware', 'Rust'],
      visibility: 'public',
    });
    expect(created).toMatchObject({
      name: 'Analytical Engine',
      slug: 'analytical-engine',
      stage: 'idea',
      tags: ['hardware', 'rust'],
    });
    expect(created.owner.username).toBe(ada.user.username);

    const got = await api.getProject({ client: grace.client, path: { projectId: created.id } });
    expect(got.data).toEqual(created);

    const updated = await api.updateProject({
      client: ada.client,
      path: { projectId: created.id },
      body: { stage: 'launched' },
    });
    expect(updated.data).toMatchObject({ stage: 'launched', name: 'Analytical Engine', tags: ['hardware', 'rust'] });

    const del = await api.deleteProject({ client: ada.client, path: { projectId: created.id } });
    expect(del.response?.status).toBe(204);
    const gone = await api.getProject({ client: ada.client, path: { projectId: created.id } });
    expect(gone.response?.status).toBe(404);
    expect(gone.error).toMatchObject({ type: '/problems/not-found' });
  });

  it('derives a free slug, and refuses a taken one with 409', async () => {
    const name = uniqueName('Same Name');
    const a = await newProject(ada, { name });
    const b = await newProject(ada, { name });
    expect(b.slug).toBe(`${a.slug}-2`);
    const clash = await api.createProject({ client: ada.client, body: { name: 'x', slug: a.slug } });
    expect(clash.response?.status).toBe(409);
    expect(clash.error).toMatchObject({ type: '/problems/conflict', code: 'project-slug-taken' });
    // Another owner may use the same slug.
    const other = await api.createProject({ client: grace.client, body: { name: 'x', slug: a.slug } });
    expect(other.response?.status).toBe(201);
  });

  it('pages through a list with a cursor, newest first', async () => {
    const owner = await userWithKey(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newProject(owner)).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.listProjects({ client: owner.client, query: { owner: 'me', limit: 2, cursor } });
      expect(page.data!.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.data!.items.map((p) => p.id));
      cursor = page.data!.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('refuses a tampered cursor and an out-of-range limit with 400', async () => {
    const bad = await raw(t, 'GET', '/projects?cursor=bm90LWEtY3Vyc29y', { token: ada.token });
    expect(bad.status).toBe(400);
    expect(bad.json.type).toBe('/problems/invalid-cursor');
    expect((await raw(t, 'GET', '/projects?limit=1000', { token: ada.token })).status).toBe(400);
    expect((await raw(t, 'GET', '/projects?limit=abc', { token: ada.token })).status).toBe(400);
  });

  it('refuses unknown fields (mass assignment) with 400 and stores nothing', async () => {
    const name = uniqueName('Sneaky');
    const res = await raw(t, 'POST', '/projects', {
      token: ada.token,
      body: { name, owner: grace.user.id, id: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['/body/owner']));
    expect(await t.db.orm.em.fork().count(Project, { name })).toBe(0);

    const p = await newProject(ada);
    const patch = await raw(t, 'PATCH', `/projects/${p.id}`, {
      token: ada.token,
      body: { createdAt: '2000-01-01T00:00:00Z' },
    });
    expect(patch.status).toBe(400);
  });

  it('names every unknown field beside a missing one, with the field it likely misspells', async () => {
    const res = await raw(t, 'POST', '/projects', { token: ada.token, body: { nmae: 'Typo', colour: 'blue' } });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual(
      expect.arrayContaining([
        { path: '/body/name', message: "must have required property 'name'" },
        { path: '/body/nmae', message: "is not a field of this body; did you mean 'name'?" },
        { path: '/body/colour', message: 'is not a field of this body' },
      ]),
    );
    expect(res.json.detail).toContain("/body/nmae is not a field of this body; did you mean 'name'?");
    // An unknown field alone is said once, as the contract's validator says it.
    const alone = await raw(t, 'POST', '/projects', {
      token: ada.token,
      body: { name: uniqueName('Alone'), tagline2: 'x' },
    });
    expect(alone.status).toBe(400);
    expect(alone.json.errors.filter((e: { path: string }) => e.path === '/body/tagline2')).toHaveLength(1);
  });

  it('says a body of many or long unknown fields in a bounded answer', async () => {
    const long = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'x', ['a'.repeat(900_000)]: 1 } });
    expect(long.status).toBe(400);
    expect(long.text.length).toBeLessThan(2_000);
    const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`f${i}`, 1]));
    const wide = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'x', ...many } });
    expect(wide.status).toBe(400);
    expect(wide.json.errors).toHaveLength(11);
    expect(wide.json.errors.at(-1)).toEqual({ path: '/body', message: 'holds 19990 more fields it does not take' });
  });

  it('answers malformed input with clear problems, never a 500', async () => {
    const cases = [
      await raw(t, 'POST', '/projects', { token: ada.token, body: '{"name": ' }),
      await raw(t, 'POST', '/projects', {
        token: ada.token,
        body: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      await raw(t, 'POST', '/projects', { token: ada.token, body: {} }),
      await raw(t, 'POST', '/projects', { token: ada.token, body: { name: '' } }),
      await raw(t, 'POST', '/projects', {
        token: ada.token,
        body: { name: 'x', links: [{ label: 'a', url: 'javascript:alert(1)' }] },
      }),
      await raw(t, 'GET', '/projects/not-a-uuid', { token: ada.token }),
      await raw(t, 'PATCH', `/projects/${(await newProject(ada)).id}`, { token: ada.token, body: {} }),
      await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'x'.repeat(2_000_000) } }),
    ];
    expect(cases.map((c) => c.status)).toEqual([400, 415, 400, 400, 400, 400, 400, 413]);
    for (const c of cases) expect(c.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers an unknown route with 404 and a wrong method with 405', async () => {
    expect((await raw(t, 'GET', '/nothing-here', { token: ada.token })).status).toBe(404);
    const put = await raw(t, 'PUT', '/projects', { token: ada.token, body: {} });
    expect(put.status).toBe(405);
    expect(put.json.type).toBe('/problems/method-not-allowed');
  });
});

describe('members', () => {
  it('adds by username, lists owner first, removes; a member may leave', async () => {
    const p = await newProject(ada);
    const added = await api.addProjectMember({
      client: ada.client,
      path: { projectId: p.id },
      body: { username: grace.user.username },
    });
    expect(added.response?.status).toBe(201);
    expect(added.data).toMatchObject({ role: 'member', user: { username: grace.user.username } });

    const list = await api.listProjectMembers({ client: eve.client, path: { projectId: p.id } });
    expect(list.data!.items.map((m) => [m.user.username, m.role])).toEqual([
      [ada.user.username, 'owner'],
      [grace.user.username, 'member'],
    ]);

    const again = await api.addProjectMember({
      client: ada.client,
      path: { projectId: p.id },
      body: { username: grace.user.username },
    });
    expect(again.response?.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'already-member' });
    const nobody = await api.addProjectMember({
      client: ada.client,
      path: { projectId: p.id },
      body: { username: 'no-such-user-here' },
    });
    expect(nobody.response?.status).toBe(422);
    expect(nobody.error).toMatchObject({ type: '/problems/unprocessable', code: 'unknown-user' });
    const byMember = await api.addProjectMember({
      client: grace.client,
      path: { projectId: p.id },
      body: { username: eve.user.username },
    });
    expect(byMember.response?.status).toBe(403);
    expect(byMember.error).toMatchObject({ type: '/problems/forbidden', code: 'member-not-owner' });

    const kick = await api.removeProjectMember({
      client: eve.client,
      path: { projectId: p.id, username: grace.user.username },
    });
    expect(kick.response?.status).toBe(403);
    const leave = await api.removeProjectMember({
      client: grace.client,
      path: { projectId: p.id, username: grace.user.username },
    });
    expect(leave.response?.status).toBe(204);
    const owner = await api.removeProjectMember({
      client: ada.client,
      path: { projectId: p.id, username: ada.user.username },
    });
    expect(owner.response?.status).toBe(409);
    expect(owner.error).toMatchObject({ code: 'owner-not-removable' });
    const notMember = await api.removeProjectMember({
      client: ada.client,
      path: { projectId: p.id, username: eve.user.username },
    });
    expect(notMember.response?.status).toBe(404);
  });

  it('pages the members in the order they joined, the owner first on the first page only', async () => {
    const p = await newProject(ada);
    const joined = [grace, eve];
    const added = [];
    for (const who of joined)
      added.push(
        (
          await api.addProjectMember({
            client: ada.client,
            path: { projectId: p.id },
            body: { username: who.user.username },
          })
        ).data!,
      );
    const first = (await api.listProjectMembers({ client: eve.client, path: { projectId: p.id }, query: { limit: 2 } }))
      .data!;
    expect(first.items).toEqual([
      {
        user: { id: ada.user.id, username: ada.user.username, displayName: expect.any(String) },
        role: 'owner',
        addedAt: p.createdAt,
      },
      added[0],
    ]);
    const rest = (
      await api.listProjectMembers({
        client: eve.client,
        path: { projectId: p.id },
        query: { limit: 2, cursor: first.nextCursor! },
      })
    ).data!;
    expect(rest).toEqual({ items: [added[1]], nextCursor: null });
    const bad = await raw(t, 'GET', `/projects/${p.id}/members?cursor=not-a-cursor`, { token: eve.token });
    expect(bad.status).toBe(400);
  });
});

describe('text the database cannot hold', () => {
  it('refuses U+0000 anywhere in a body with 400, after authentication', async () => {
    const res = await raw(t, 'POST', '/projects', { token: ada.token, body: '{"name":"a","description":"a\\u0000b"}' });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([
      { path: '/body/description', message: 'must not contain NUL (\\u0000) characters' },
    ]);
    // A name is one line: the contract refuses every control character in it, NUL among them.
    const name = await raw(t, 'POST', '/projects', { token: ada.token, body: '{"name":"a\\u0000b"}' });
    expect(name.status).toBe(400);
    expect(name.json.errors).toEqual([{ path: '/body/name', message: expect.stringMatching(/^must be one line/) }]);
    const p = await newProject(ada);
    const nested = await raw(t, 'PATCH', `/projects/${p.id}`, {
      token: ada.token,
      body: { links: [{ label: 'x\u0000', url: 'https://a.example' }] },
    });
    expect(nested.status).toBe(400);
    expect(nested.json.errors[0].path).toBe('/body/links/0/label');
    expect((await raw(t, 'POST', '/projects', { body: '{"name":"a\\u0000b"}' })).status).toBe(401);
  });
});
