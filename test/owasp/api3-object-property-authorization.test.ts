/** OWASP API3:2023 Broken Object Property Level Authorization — mass assignment and over-exposure. */
import { describe, expect, it } from 'vitest';
import { raw, uniqueName, useServer } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';

const {
  t,
  users: { ada, eve },
} = useServer({ users: { ada: { admin: true }, eve: 'all' } });

describe('API3 object property level authorization', () => {
  it('refuses every attempt to set a property the server owns (400), changing nothing', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('P') } })).data!;
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b' } })).data!;
    const job = (
      await api.createJob({
        client: ada.client,
        body: {
          title: 'j',
          company: 'c',
          description: 'd',
          remotePolicy: 'remote',
          employmentType: 'contract',
          applyUrl: 'https://a.example/j',
        },
      })
    ).data!;
    const attempts = [
      ['POST', '/projects', { name: 'x', owner: { id: eve.user.id } }],
      ['POST', '/projects', { name: 'x', ownerId: eve.user.id }],
      ['PATCH', `/projects/${project.id}`, { createdAt: '2000-01-01T00:00:00Z' }],
      ['POST', `/projects/${project.id}/milestones`, { title: 'x', completedAt: '2000-01-01T00:00:00Z' }],
      ['POST', `/projects/${project.id}/milestones`, { title: 'x', projectId: project.id }],
      ['POST', '/posts', { title: 't', body: 'b', commentCount: 1000 }],
      ['POST', '/posts', { title: 't', body: 'b', author: { id: eve.user.id } }],
      ['PATCH', `/posts/${post.id}`, { hidden: false }],
      ['PATCH', `/posts/${post.id}`, { reactionCount: 99 }],
      ['PATCH', `/jobs/${job.id}`, { status: 'open', poster: eve.user.id }],
      ['POST', `/projects/${project.id}/members`, { username: eve.user.username, role: 'owner' }],
      ['POST', `/posts/${post.id}/comments`, { body: 'c', depth: 0, deleted: true }],
    ] as const;
    for (const [method, path, body] of attempts) {
      const res = await raw(t, method, path, { token: ada.token, body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
    }
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).data).toMatchObject({
      commentCount: 0,
      reactionCount: 0,
    });
    expect((await api.getProject({ client: ada.client, path: { projectId: project.id } })).data!.owner.id).toBe(
      ada.user.id,
    );
  });

  it('never shows private fields in any response', async () => {
    const bodies = [
      (await raw(t, 'GET', '/users/me', { token: ada.token })).text,
      (await raw(t, 'GET', `/users/${ada.user.username}`, { token: eve.token })).text,
      (await raw(t, 'GET', '/projects?limit=100', { token: eve.token })).text,
      (await raw(t, 'GET', `/search?q=${ada.user.username}`, { token: eve.token })).text,
      (await raw(t, 'GET', '/posts?limit=100', { token: eve.token })).text,
    ];
    for (const text of bodies) {
      expect(text).not.toMatch(
        /"(email|passwordHash|password_hash|tokenHash|token_hash|isAdmin|is_admin|last4|scopes)"/,
      );
      expect(text).not.toContain('@example.test');
    }
  });
});
