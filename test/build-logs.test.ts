import { describe, expect, it } from 'vitest';
import { raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';
import { png } from './fixtures/images.js';

const {
  t,
  users: { owner, member, stranger },
} = useServer({ users: { owner: 'all', member: 'all', stranger: 'all' } });

async function project(visibility: 'public' | 'private' = 'public') {
  const { data } = await api.createProject({ client: owner.client, body: { name: uniqueName('Logs'), visibility } });
  await api.addProjectMember({
    client: owner.client,
    path: { projectId: data!.id },
    body: { username: member.user.username },
  });
  return data!.id;
}
const log = (who: TestUser, projectId: string, title: string) =>
  api.createPost({
    client: who.client,
    body: { kind: 'build_log', projectId, title, body: `**${title}**`, tags: ['Progress'] },
  });

describe('build logs', () => {
  it('are written by the owner and members, and listed newest first', async () => {
    const p = await project();
    const a = await log(owner, p, 'by owner');
    expect(a.response?.status).toBe(201);
    expect(a.data).toMatchObject({
      kind: 'build_log',
      projectId: p,
      tags: ['progress'],
      commentCount: 0,
      hidden: false,
    });
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
    const missing = await raw(t, 'POST', '/posts', {
      token: owner.token,
      body: { kind: 'build_log', title: 't', body: 'b' },
    });
    expect(missing.status).toBe(400);
    expect(missing.json.errors[0].path).toBe('/body/projectId');
    const plain = await raw(t, 'POST', '/posts', {
      token: owner.token,
      body: { kind: 'post', projectId: p, title: 't', body: 'b' },
    });
    expect(plain.status).toBe(400);
    const ok = await raw(t, 'POST', '/posts', { token: owner.token, body: { title: 'plain', body: 'b' } });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ kind: 'post', projectId: null });
  });

  it('pages by cursor, newest first, with the same items the post itself shows; a plain post of the author is not listed', async () => {
    const p = await project();
    const written = [];
    for (const title of ['first', 'second', 'third']) written.push((await log(owner, p, title)).data!);
    await api.createPost({ client: owner.client, body: { title: 'not a log', body: 'plain' } });
    const one = await api.listBuildLogs({ client: stranger.client, path: { projectId: p }, query: { limit: 2 } });
    expect(one.data!.items.map((x) => x.title)).toEqual(['third', 'second']);
    expect(one.data!.nextCursor).toEqual(expect.any(String));
    const two = await api.listBuildLogs({
      client: stranger.client,
      path: { projectId: p },
      query: { limit: 2, cursor: one.data!.nextCursor! },
    });
    expect(two.data!.items.map((x) => x.title)).toEqual(['first']);
    expect(two.data!.nextCursor).toBeNull();
    // Field for field what GET /posts/{id} answers (the list reads rows, the post an entity).
    const single = await api.getPost({ client: stranger.client, path: { postId: written[0]!.id } });
    expect(two.data!.items[0]).toEqual(single.data);
  });

  it('answers 404 for a project the caller may not read, before looking at the cursor', async () => {
    const priv = await project('private');
    await log(member, priv, 'secret');
    expect((await raw(t, 'GET', `/projects/${priv}/build-logs`, { token: stranger.token })).status).toBe(404);
    expect(
      (await raw(t, 'GET', `/projects/${priv}/build-logs?cursor=not-a-cursor`, { token: stranger.token })).status,
    ).toBe(404);
    const mine = await raw(t, 'GET', `/projects/${priv}/build-logs`, { token: member.token });
    expect(mine.status).toBe(200);
    expect(mine.json.items.map((x: { title: string }) => x.title)).toEqual(['secret']);
    expect(
      (await raw(t, 'GET', `/projects/${priv}/build-logs?cursor=not-a-cursor`, { token: member.token })).status,
    ).toBe(400);
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

  it("of a private project go with it: members' notes and the images they showed never become public", async () => {
    const p = await project('private');
    const image = await api.uploadMedia({
      client: member.client,
      body: { file: new Blob([new Uint8Array(png(8, 8))]) },
    });
    const res = await api.createPost({
      client: member.client,
      body: {
        kind: 'build_log',
        projectId: p,
        title: 'private notes',
        body: 'only the team',
        mediaIds: [image.data!.id],
      },
    });
    expect(res.response?.status).toBe(201);
    await api.createComment({ client: owner.client, path: { postId: res.data!.id }, body: { body: 'noted' } });
    expect((await raw(t, 'GET', `/media/${image.data!.id}`, { token: stranger.token })).status).toBe(404);

    expect((await api.deleteProject({ client: owner.client, path: { projectId: p } })).response?.status).toBe(204);
    for (const who of [stranger, member, owner])
      expect((await raw(t, 'GET', `/posts/${res.data!.id}`, { token: who.token })).status).toBe(404);
    expect((await raw(t, 'GET', `/media/${image.data!.id}`, { token: stranger.token })).status).toBe(404);
    // The image is still its uploader's, as any image no post shows.
    expect((await raw(t, 'GET', `/media/${image.data!.id}`, { token: member.token })).status).toBe(200);
    expect(await t.db.orm.em.fork().count(Post, { id: res.data!.id })).toBe(0);
  });
});
