import { describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { userWithKey, raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import type * as types from '../codegen/generated/api/types.gen.js';
import { Job } from '../src/jobs/job.entity.js';
import { User } from '../src/users/user.entity.js';

const {
  t,
  users: { ada, eve },
} = useServer({ users: { ada: 'all', eve: 'all' } });

const base: types.JobCreate = {
  title: 'TypeScript engineer',
  company: 'Engines Ltd',
  description: 'Build the engine API.',
  remotePolicy: 'remote',
  employmentType: 'full_time',
  applyUrl: 'https://jobs.example.com/1',
};
const post = async (who: TestUser, extra: Partial<types.JobCreate> = {}) => {
  const res = await api.createJob({ client: who.client, body: { ...base, ...extra } });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
};

describe('jobs', () => {
  it('posts, reads, edits, closes and deletes; only the poster may change it', async () => {
    const job = await post(ada, {
      salaryMin: 60000,
      salaryMax: 80000,
      salaryCurrency: 'EUR',
      skills: ['TypeScript', 'SQL'],
      location: 'Berlin',
    });
    expect(job).toMatchObject({
      status: 'open',
      expired: false,
      skills: ['typescript', 'sql'],
      salaryCurrency: 'EUR',
      poster: { username: ada.user.username },
    });
    const days = (Date.parse(job.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect((await api.getJob({ client: eve.client, path: { jobId: job.id } })).data).toEqual(job);

    expect(
      (await api.updateJob({ client: eve.client, path: { jobId: job.id }, body: { title: 'x' } })).response?.status,
    ).toBe(403);
    expect((await api.closeJob({ client: eve.client, path: { jobId: job.id } })).response?.status).toBe(403);
    expect((await api.deleteJob({ client: eve.client, path: { jobId: job.id } })).response?.status).toBe(403);

    const edited = await api.updateJob({
      client: ada.client,
      path: { jobId: job.id },
      body: { salaryMin: null, salaryMax: null, salaryCurrency: null },
    });
    expect(edited.data).toMatchObject({ salaryMin: null, salaryMax: null, salaryCurrency: null, title: job.title });
    // The contract declares no body for close: one sent is refused, unread, and nothing changes.
    for (const [body, type] of [
      ['{"status":"open"}', 'application/json'],
      ['status=open', 'text/plain'],
    ]) {
      const refused = await raw(t, 'POST', `/jobs/${job.id}/close`, {
        token: ada.token,
        body,
        headers: { 'content-type': type! },
      });
      expect(refused.status, type).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.json.detail).toBe('POST /jobs/{jobId}/close takes no request body; send it without one.');
    }
    expect((await api.getJob({ client: ada.client, path: { jobId: job.id } })).data!.status).toBe('open');
    const chunked = (sent?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          `${t.apiUrl}/jobs/${job.id}/close`,
          { method: 'POST', headers: { authorization: `Bearer ${ada.token}`, 'transfer-encoding': 'chunked' } },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c)).on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject).end(sent);
      });
    expect((await chunked('{"status":"open"}')).status).toBe(400);
    // A chunked request whose stream ends at once (some clients and proxies send one) has no body.
    const closed = await chunked();
    expect(closed.status).toBe(200);
    expect((JSON.parse(closed.body) as types.Job).status).toBe('closed');
    expect((await api.deleteJob({ client: ada.client, path: { jobId: job.id } })).response?.status).toBe(204);
    expect((await api.getJob({ client: ada.client, path: { jobId: job.id } })).response?.status).toBe(404);
  });

  it('checks salary (all or nothing, min ≤ max, ISO 4217), https apply URLs and expiry', async () => {
    const bad: Record<string, unknown>[] = [
      { salaryMin: 100 },
      { salaryMin: 100, salaryMax: 200 },
      { salaryMin: 300, salaryMax: 200, salaryCurrency: 'EUR' },
      { salaryMin: 100, salaryMax: 200, salaryCurrency: 'XYZ' },
      { salaryMin: 100, salaryMax: 200, salaryCurrency: 'eur' },
      { applyUrl: 'http://jobs.example.com/1' },
      { applyUrl: 'javascript:alert(1)' },
      { expiresAt: '2000-01-01T00:00:00Z' },
      { expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() },
      { remotePolicy: 'moon' },
      { posterId: ada.user.id },
    ];
    const before = await t.db.orm.em.fork().count(Job, { poster: ada.user.id });
    for (const extra of bad) {
      const res = await raw(t, 'POST', '/jobs', { token: ada.token, body: { ...base, ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(await t.db.orm.em.fork().count(Job, { poster: ada.user.id })).toBe(before);
    const job = await post(ada);
    const half = await raw(t, 'PATCH', `/jobs/${job.id}`, { token: ada.token, body: { salaryMax: 5 } });
    expect(half.status).toBe(400);
  });

  it('lists open, unexpired jobs by default, with filters', async () => {
    const poster = await userWithKey(t);
    const word = `zq${uniqueName('').replace(/-/g, '')}`;
    const remote = await post(poster, { skills: ['rust'], description: `Work on the ${word} compiler.` });
    const onsite = await post(poster, {
      remotePolicy: 'onsite',
      employmentType: 'contract',
      location: 'Paris, France',
      skills: ['go'],
    });
    const closed = await post(poster);
    await api.closeJob({ client: poster.client, path: { jobId: closed.id } });
    const expired = await post(poster);
    await t.db.orm.em.fork().nativeUpdate(Job, { id: expired.id }, { expiresAt: new Date(Date.now() - 1000) });

    const ids = async (query: NonNullable<Parameters<typeof api.listJobs>[0]>['query'] = {}) =>
      (
        await api.listJobs({ client: eve.client, query: { postedBy: poster.user.username, limit: 100, ...query } })
      ).data!.items.map((j) => j.id);
    expect(await ids()).toEqual([onsite.id, remote.id]);
    expect(await ids({ status: 'all' })).toEqual([expired.id, closed.id, onsite.id, remote.id]);
    expect(await ids({ remotePolicy: 'onsite' })).toEqual([onsite.id]);
    expect(await ids({ employmentType: 'contract' })).toEqual([onsite.id]);
    expect(await ids({ skill: 'RUST' })).toEqual([remote.id]);
    expect(await ids({ location: 'paris' })).toEqual([onsite.id]);
    expect(await ids({ q: `${word} compilers` })).toEqual([remote.id]);
    expect(
      (await api.listJobs({ client: poster.client, query: { postedBy: 'me', status: 'all', limit: 100 } })).data!.items
        .length,
    ).toBe(4);
    const expiredJob = (await api.getJob({ client: eve.client, path: { jobId: expired.id } })).data!;
    expect(expiredJob.expired).toBe(true);
    expect((await raw(t, 'GET', '/jobs?location=%25', { token: eve.token })).status).toBe(200);
    expect((await raw(t, 'GET', '/jobs?q=the', { token: eve.token })).status).toBe(400);
    // The list shows each job field for field as GET /jobs/{id} does, expired or not.
    const listed = (
      await api.listJobs({ client: eve.client, query: { postedBy: poster.user.username, status: 'all', limit: 100 } })
    ).data!.items;
    for (const id of [expired.id, remote.id]) {
      expect(listed.find((j) => j.id === id)).toEqual(
        (await api.getJob({ client: eve.client, path: { jobId: id } })).data,
      );
    }
    expect(listed.find((j) => j.id === expired.id)!.expired).toBe(true);
    expect(listed.find((j) => j.id === remote.id)!.expired).toBe(false);
  });
});

describe('profiles', () => {
  it("shows a user's public profile, projects and posts, and nothing private", async () => {
    const profile = await api.getUser({ client: eve.client, path: { username: ada.user.username } });
    expect(profile.data).toMatchObject({
      id: ada.user.id,
      username: ada.user.username,
      location: null,
      website: null,
      githubLogin: null,
    });
    const text = JSON.stringify(profile.data);
    expect(text).not.toMatch(/email|password|token|isAdmin/i);
    expect((await api.getUser({ client: eve.client, path: { username: 'no-such-user' } })).response?.status).toBe(404);

    const pub = (await api.createProject({ client: ada.client, body: { name: uniqueName('Pub') } })).data!;
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('Priv'), visibility: 'private' } })
    ).data!;
    const projects = (
      await api.listUserProjects({ client: eve.client, path: { username: ada.user.username }, query: { limit: 100 } })
    ).data!;
    expect(projects.items.map((p) => p.id)).toContain(pub.id);
    expect(projects.items.map((p) => p.id)).not.toContain(priv.id);

    const p1 = (await api.createPost({ client: ada.client, body: { title: 'hello', body: 'world' } })).data!;
    const posts = (await api.listUserPosts({ client: eve.client, path: { username: ada.user.username } })).data!;
    expect(posts.items[0]!.id).toBe(p1.id);
    expect(posts.items.every((p) => p.author.id === ada.user.id)).toBe(true);
    expect(projects.items.every((p) => p.owner.id === ada.user.id)).toBe(true);
    // Every page of the user's posts is theirs, in order, to the end.
    await api.createPost({ client: eve.client, body: { title: 'not ada', body: 'b' } });
    const p2 = (await api.createPost({ client: ada.client, body: { title: 'again', body: 'b' } })).data!;
    const first = (
      await api.listUserPosts({ client: eve.client, path: { username: ada.user.username }, query: { limit: 1 } })
    ).data!;
    expect(first.items.map((p) => p.id)).toEqual([p2.id]);
    const second = (
      await api.listUserPosts({
        client: eve.client,
        path: { username: ada.user.username },
        query: { limit: 1, cursor: first.nextCursor! },
      })
    ).data!;
    expect(second.items.map((p) => p.id)).toEqual([p1.id]);
    for (const list of [api.listUserProjects, api.listUserPosts]) {
      expect((await list({ client: eve.client, path: { username: 'no-such-user' } })).response?.status).toBe(404);
    }
  });

  it('shows the same profile to its owner (GET /users/me) and to others', async () => {
    const theirs = (await api.getUser({ client: eve.client, path: { username: ada.user.username } })).data!;
    expect((await api.getCurrentUser({ client: ada.client })).data).toEqual(theirs);
    // Usernames are lower case in the contract: another spelling is the caller's mistake, not a miss.
    const upper = await raw(t, 'GET', `/users/${ada.user.username.toUpperCase()}`, { token: eve.token });
    expect(upper.status).toBe(400);
    expect(upper.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const stored = await t.db.orm.em.fork().findOneOrFail(User, { id: ada.user.id });
    expect(theirs).toMatchObject({
      displayName: stored.displayName,
      bio: stored.bio,
      skills: stored.skills,
      createdAt: stored.createdAt.toISOString(),
    });
  });
});
