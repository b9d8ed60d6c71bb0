/** OWASP API6:2023 Unrestricted Access to Sensitive Business Flows — flows that must not be gamed. */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startServer, userWithKey, raw, uniqueName, useServer } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import { Project } from '../../src/projects/project.entity.js';

const {
  t,
  users: { owner, stranger },
} = useServer({ users: { owner: 'all', stranger: 'all' } });

describe('API6 sensitive business flows', () => {
  it('does not let a stranger join a project, or post as one of its builders', async () => {
    const p = (await api.createProject({ client: owner.client, body: { name: uniqueName('P') } })).data!;
    expect(
      (
        await api.addProjectMember({
          client: stranger.client,
          path: { projectId: p.id },
          body: { username: stranger.user.username },
        })
      ).response?.status,
    ).toBe(403);
    expect(
      (
        await api.createPost({
          client: stranger.client,
          body: { kind: 'build_log', projectId: p.id, title: 't', body: 'b' },
        })
      ).response?.status,
    ).toBe(403);
    expect((await api.listBuildLogs({ client: owner.client, path: { projectId: p.id } })).data!.items).toEqual([]);
  });

  it('does not let reactions be inflated by repeating them', async () => {
    const post = (await api.createPost({ client: owner.client, body: { title: 't', body: 'b' } })).data!;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        api.addReaction({ client: stranger.client, path: { postId: post.id }, body: { kind: 'rocket' } }),
      ),
    );
    expect((await api.getPost({ client: owner.client, path: { postId: post.id } })).data!.reactionCount).toBe(1);
  });

  it('does not create twice when a client retries a create with its Idempotency-Key', async () => {
    const key = randomUUID();
    const name = uniqueName('Once');
    await Promise.all(
      Array.from({ length: 5 }, () =>
        raw(t, 'POST', '/projects', { token: owner.token, body: { name }, headers: { 'idempotency-key': key } }),
      ),
    );
    const mine = (
      await api.listProjects({ client: owner.client, query: { owner: 'me', limit: 100 } })
    ).data!.items.filter((p) => p.name === name);
    expect(mine.length).toBe(1);
  });

  it('creates exactly once when the first attempt outlives its deadline (503) and is retried with its Idempotency-Key', async () => {
    const slow = await startServer({ requestTimeoutMs: 300 });
    const locker = slow.db.orm.em.fork();
    try {
      const ada = await userWithKey(slow, ['projects.read', 'projects.write']);
      const name = uniqueName('Late');
      // Warm: the key is looked up (and cached), and the validator of the paths under /projects
      // made, before the table is held; making it may take longer than this short deadline (503).
      let warm = await raw(slow, 'GET', '/projects', { token: ada.token });
      for (let i = 0; i < 5 && warm.status === 503; i++)
        warm = await raw(slow, 'GET', '/projects', { token: ada.token });
      expect(warm.status).toBe(200);
      const key = randomUUID();
      const send = () =>
        raw(slow, 'POST', '/projects', { token: ada.token, body: { name }, headers: { 'idempotency-key': key } });
      // Hold the projects table (on the embedded database, its one connection) past the deadline.
      await locker.begin();
      await locker.execute('lock table projects in share row exclusive mode');
      const first = await send();
      expect(first.status).toBe(503);
      expect(first.json.detail).toMatch(/may or may not have been applied/);
      const retry = await send(); // the first attempt is still waiting for the table
      expect([409, 503]).toContain(retry.status);
      await locker.commit();
      let settled = await send();
      for (let i = 0; i < 40 && settled.status !== 201; i++) {
        await new Promise((r) => setTimeout(r, 100));
        settled = await send();
      }
      expect(settled.status).toBe(201);
      expect(settled.headers.get('idempotent-replayed')).toBe('true');
      expect(await slow.db.orm.em.fork().count(Project, { name })).toBe(1);
    } finally {
      if (locker.isInTransaction()) await locker.rollback();
      await slow.close();
    }
  });

  it('does not let a job be posted without an expiry or beyond a year', async () => {
    const base = {
      title: 'j',
      company: 'c',
      description: 'd',
      remotePolicy: 'remote',
      employmentType: 'contract',
      applyUrl: 'https://a.example/j',
    };
    const res = await raw(t, 'POST', '/jobs', {
      token: owner.token,
      body: { ...base, expiresAt: new Date(Date.now() + 2 * 365 * 86_400_000).toISOString() },
    });
    expect(res.status).toBe(400);
    const ok = (await raw(t, 'POST', '/jobs', { token: owner.token, body: base })).json;
    expect(Date.parse(ok.expiresAt)).toBeLessThanOrEqual(Date.now() + 31 * 86_400_000);
  });
});
