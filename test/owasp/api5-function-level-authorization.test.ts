/** OWASP API5:2023 Broken Function Level Authorization — admin functions and scopes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, uniqueName, type TestServer } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import { SCOPE_IDS } from '../../src/keys/scopes.js';
import { Post } from '../../src/posts/post.entity.js';

let t: TestServer;
beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t?.close();
});

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
    expect((await api.getProject({ client: writer.client, path: { projectId: project.id } })).response?.status).toBe(403);
    expect((await api.listPosts({ client: writer.client })).response?.status).toBe(403);
    expect((await api.listJobs({ client: writer.client })).response?.status).toBe(403);
    expect((await api.getCurrentUser({ client: writer.client })).response?.status).toBe(403);
  });

  it('answers an unknown method on a known path with 405, not by running something else', async () => {
    const u = await userWithKey(t);
    for (const method of ['PUT', 'PATCH']) {
      expect((await raw(t, method, '/posts', { token: u.token, body: {} })).status).toBe(405);
    }
  });
});
