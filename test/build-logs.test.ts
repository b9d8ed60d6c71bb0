import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, uniqueName, type TestServer, type TestUser } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';

let t: TestServer;
let owner: TestUser;
let member: TestUser;
let stranger: TestUser;
beforeAll(async () => {
  t = await startServer();
  [owner, member, stranger] = [await userWithKey(t), await userWithKey(t), await userWithKey(t)];
});
afterAll(async () => {
  await t?.close();
});

async function project(visibility: 'public' | 'private' = 'public') {
  const { data } = await api.createProject({ client: owner.client, body: { name: uniqueName('Logs'), visibility } });
  await api.addProjectMember({ client: owner.client, path: { projectId: data!.id }, body: { username: member.user.username } });
  return data!.id;
}
const log = (who: TestUser, projectId: string, title: string) =>
  api.createPost({ client: who.client, body: { kind: 'build_log', projectId, title, body: `**${title}**`, tags: ['Progress'] } });

describe('build logs', () => {
  it('are written by the owner and members, and listed newest first', async () => {
    const p = await project();
    const a = await log(owner, p, 'by owner');
    expect(a.response?.status).toBe(201);
    expect(a.data).toMatchObject({ kind: 'build_log', projectId: p, tags: ['progress'], commentCount: 0, hidden: false });
    expect(a.response?.headers.get('location')).toBe(`/api/v1/posts/${a.data!.id}`);
    const b = await log(member, p, 'by member');
    expect(b.response?.status).toBe(201);

    const list = await api.listBuildLogs({ client: stranger.client, path: { projectId: p } });
    expect(list.data!.items.map((x) => x.title)).toEqual(['by member', 'by owner']);
    expect(list.data!.items[0]!.author.username).toBe(member.user.username);
  });

  it('refuses a stranger (403 on a public project, 422 on an invisible one) and stores nothing', async () => {
    const pub = await project('public');
    const res = await log(stranger, pub, 'intruder');
    expect(res.response?.status).toBe(403);
    const priv = await project('private');
    const hidden = await log(stranger, priv, 'intruder');
    expect(hidden.response?.status).toBe(422);
    expect(await t.db.orm.em.fork().count(Post, { title: 'intruder' })).toBe(0);
  });

  it('needs a projectId for a build log, and refuses one on a plain post', async () => {
    const p = await project();
    const missing = await raw(t, 'POST', '/posts', { token: owner.token, body: { kind: 'build_log', title: 't', body: 'b' } });
    expect(missing.status).toBe(400);
    expect(missing.json.errors[0].path).toBe('/body/projectId');
    const plain = await raw(t, 'POST', '/posts', { token: owner.token, body: { kind: 'post', projectId: p, title: 't', body: 'b' } });
    expect(plain.status).toBe(400);
    const ok = await raw(t, 'POST', '/posts', { token: owner.token, body: { title: 'plain', body: 'b' } });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ kind: 'post', projectId: null });
  });

  it('does not show a hidden build log to others, only to its author', async () => {
    const p = await project();
    const res = await log(member, p, 'to hide');
    await t.db.orm.em.fork().nativeUpdate(Post, { id: res.data!.id }, { hiddenAt: new Date() });
    const others = await api.listBuildLogs({ client: stranger.client, path: { projectId: p } });
    expect(others.data!.items.map((x) => x.id)).not.toContain(res.data!.id);
    const author = await api.listBuildLogs({ client: member.client, path: { projectId: p } });
    expect(author.data!.items.find((x) => x.id === res.data!.id)?.hidden).toBe(true);
  });

  it('survive the deletion of their project as plain posts', async () => {
    const p = await project();
    const res = await log(member, p, 'keeps');
    await api.deleteProject({ client: owner.client, path: { projectId: p } });
    const post = await t.db.orm.em.fork().findOneOrFail(Post, { id: res.data!.id });
    expect(post.kind).toBe('post');
    expect(post.project).toBeNull();
  });
});
