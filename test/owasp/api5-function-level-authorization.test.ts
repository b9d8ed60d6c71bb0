/** OWASP API5:2023 Broken Function Level Authorization — admin functions and scopes. */
import { describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, useServer } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import { SCOPE_IDS } from '../../src/kernel/scopes.js';
import { Post } from '../../src/posts/post.entity.js';

const { t } = useServer();

describe('API5 function level authorization', () => {
  it("refuses the admin function to every key, an administrator's with every scope included", async () => {
    const admin = await userWithKey(t, SCOPE_IDS, { admin: true });
    const post = (await api.createPost({ client: admin.client, body: { title: uniqueName('spam'), body: 'b' } })).data!;
    const res = await raw(t, 'POST', `/admin/posts/${post.id}/hide`, { token: admin.token });
    expect(res.status).toBe(403);
    expect((await t.db.orm.em.fork().findOneOrFail(Post, { id: post.id })).hiddenAt).toBeNull();
  });

  it('lets no scope imply another: write without read reads nothing', async () => {
    const writer = await userWithKey(t, ['projects.write', 'content.write', 'jobs.write']);
    const project = (await api.createProject({ client: writer.client, body: { name: uniqueName('W') } })).data!;
    expect((await api.getProject({ client: writer.client, path: { projectId: project.id } })).response?.status).toBe(
      403,
    );
    expect((await api.listPosts({ client: writer.client })).response?.status).toBe(403);
    expect((await api.listJobs({ client: writer.client })).response?.status).toBe(403);
    expect((await api.getCurrentUser({ client: writer.client })).response?.status).toBe(403);
  });

  it("lets only the owner manage members: removing the owner's membership is a 403 to anyone else, a 409 to the owner", async () => {
    const [owner, member, stranger] = [await userWithKey(t), await userWithKey(t), await userWithKey(t)];
    const project = (await api.createProject({ client: owner.client, body: { name: uniqueName('Team') } })).data!;
    await api.addProjectMember({
      client: owner.client,
      path: { projectId: project.id },
      body: { username: member.user.username },
    });
    const removeOwner = (token: string) =>
      raw(t, 'DELETE', `/projects/${project.id}/members/${owner.user.username}`, { token });
    for (const who of [member, stranger]) {
      const res = await removeOwner(who.token);
      expect(res.status).toBe(403);
      expect(res.json.type).toBe('/problems/forbidden');
    }
    expect((await removeOwner(owner.token)).status).toBe(409);
    const members = (
      await api.listProjectMembers({ client: owner.client, path: { projectId: project.id } })
    ).data!.items.map((m) => m.user.username);
    expect(members).toEqual([owner.user.username, member.user.username]);
  });

  it('answers an unknown method on a known path with 405, not by running something else', async () => {
    const u = await userWithKey(t);
    for (const method of ['PUT', 'PATCH']) {
      expect((await raw(t, method, '/posts', { token: u.token, body: {} })).status).toBe(405);
    }
  });
});
