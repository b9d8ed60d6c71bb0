import { describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';

const {
  t,
  users: { ada, grace, eve },
} = useServer({ users: { ada: 'all', grace: 'all', eve: 'all' } });

const write = async (who: TestUser, body: Partial<Parameters<typeof api.createPost>[0]['body']> = {}) => {
  const res = await api.createPost({ client: who.client, body: { title: uniqueName('t'), body: 'hello', ...body } });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
};

describe('posts', () => {
  it('reads, edits and deletes a post; only the author may change it', async () => {
    const post = await write(ada, { tags: ['Rust', 'WASM'] });
    expect((await api.getPost({ client: eve.client, path: { postId: post.id } })).data).toEqual(post);

    const denied = await api.updatePost({ client: eve.client, path: { postId: post.id }, body: { title: 'mine' } });
    expect(denied.response?.status).toBe(403);
    const edited = await api.updatePost({
      client: ada.client,
      path: { postId: post.id },
      body: { body: 'edited', tags: ['Go'] },
    });
    expect(edited.data).toMatchObject({ title: post.title, body: 'edited', tags: ['go'] });
    const kind = await raw(t, 'PATCH', `/posts/${post.id}`, { token: ada.token, body: { kind: 'build_log' } });
    expect(kind.status).toBe(400);

    expect((await api.deletePost({ client: eve.client, path: { postId: post.id } })).response?.status).toBe(403);
    expect((await api.deletePost({ client: ada.client, path: { postId: post.id } })).response?.status).toBe(204);
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).response?.status).toBe(404);
  });

  it('lists newest first with author, tag, kind and project filters', async () => {
    const author = await userWithKey(t);
    const project = (await api.createProject({ client: author.client, body: { name: uniqueName('P') } })).data!;
    const a = await write(author, { tags: ['alpha'] });
    const b = await write(author, { tags: ['beta', 'alpha'] });
    const c = await write(author, { kind: 'build_log', projectId: project.id });
    const ids = async (query: NonNullable<Parameters<typeof api.listPosts>[0]>['query']) =>
      (await api.listPosts({ client: eve.client, query: { limit: 100, ...query } })).data!.items.map((p) => p.id);
    expect(await ids({ author: author.user.username })).toEqual([c.id, b.id, a.id]);
    expect(await ids({ author: author.user.username, tag: 'ALPHA' })).toEqual([b.id, a.id]);
    expect(await ids({ author: author.user.username, kind: 'build_log' })).toEqual([c.id]);
    expect(await ids({ projectId: project.id })).toEqual([c.id]);
    const mine = (await api.listPosts({ client: author.client, query: { author: 'me', limit: 2 } })).data!;
    expect(mine.items.map((p) => p.id)).toEqual([c.id, b.id]);
    const next = (
      await api.listPosts({ client: author.client, query: { author: 'me', limit: 2, cursor: mine.nextCursor! } })
    ).data!;
    expect(next.items.map((p) => p.id)).toEqual([a.id]);
    expect(next.nextCursor).toBeNull();
  });

  it('never shows a post on a private project or a hidden post to those who may not read it', async () => {
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('Secret'), visibility: 'private' } })
    ).data!;
    await api.addProjectMember({
      client: ada.client,
      path: { projectId: priv.id },
      body: { username: grace.user.username },
    });
    const secret = await write(ada, { kind: 'build_log', projectId: priv.id, title: uniqueName('secret') });
    const hidden = await write(grace, { title: uniqueName('hidden') });
    await t.db.orm.em.fork().nativeUpdate(Post, { id: hidden.id }, { hiddenAt: new Date() });

    expect((await api.getPost({ client: eve.client, path: { postId: secret.id } })).response?.status).toBe(404);
    expect((await api.getPost({ client: grace.client, path: { postId: secret.id } })).response?.status).toBe(200);
    expect((await api.getPost({ client: eve.client, path: { postId: hidden.id } })).response?.status).toBe(404);
    expect((await api.getPost({ client: grace.client, path: { postId: hidden.id } })).data!.hidden).toBe(true);
    expect((await api.listComments({ client: eve.client, path: { postId: secret.id } })).response?.status).toBe(404);
    expect(
      (await api.createComment({ client: eve.client, path: { postId: hidden.id }, body: { body: 'x' } })).response
        ?.status,
    ).toBe(404);

    const eveSees = (await api.listPosts({ client: eve.client, query: { limit: 100 } })).data!.items.map((p) => p.id);
    expect(eveSees).not.toContain(secret.id);
    expect(eveSees).not.toContain(hidden.id);
    const byAuthor = (
      await api.listPosts({ client: eve.client, query: { author: ada.user.username, limit: 100 } })
    ).data!.items.map((p) => p.id);
    expect(byAuthor).not.toContain(secret.id);
    // Those who may read them see them in the list too: the project's owner and member, the hidden post's author.
    const adaSees = (
      await api.listPosts({ client: ada.client, query: { author: ada.user.username, limit: 100 } })
    ).data!.items.map((p) => p.id);
    expect(adaSees).toContain(secret.id);
    const graceSees = (await api.listPosts({ client: grace.client, query: { limit: 100 } })).data!.items;
    expect(graceSees.map((p) => p.id)).toEqual(expect.arrayContaining([secret.id, hidden.id]));
    expect(graceSees.find((p) => p.id === hidden.id)!.hidden).toBe(true);
  });

  it('shows in the list field for field what GET /posts/{id} shows', async () => {
    const post = await write(ada, { tags: ['Gamma', 'delta'], title: uniqueName('same') });
    const listed = (await api.listPosts({ client: eve.client, query: { author: ada.user.username, limit: 1 } })).data!
      .items[0];
    expect(listed).toEqual((await api.getPost({ client: eve.client, path: { postId: post.id } })).data);
  });

  it('sums a long post up with view=summary: an excerpt of its text, no body, in every list of posts', async () => {
    const author = await userWithKey(t);
    const project = (await api.createProject({ client: author.client, body: { name: uniqueName('P') } })).data!;
    const long = `# Week 9\n\nThe **mill** turns at last: [the pull request](https://example.com/pr/1) has it.\n\n${'gear '.repeat(4_000)}`;
    expect(long.length).toBeGreaterThan(20_000);
    const post = await write(author, { kind: 'build_log', projectId: project.id, body: long, title: 'Week 9' });
    const reads = [
      (view?: 'summary' | 'full') =>
        api.listPosts({ client: eve.client, query: { author: author.user.username, ...(view && { view }) } }),
      (view?: 'summary' | 'full') =>
        api.listUserPosts({ client: eve.client, path: { username: author.user.username }, query: view && { view } }),
      (view?: 'summary' | 'full') =>
        api.listBuildLogs({ client: eve.client, path: { projectId: project.id }, query: view && { view } }),
    ];
    const whole = (await api.getPost({ client: eve.client, path: { postId: post.id } })).data!;
    for (const list of reads) {
      const summary = await list('summary');
      expect(summary.response?.status).toBe(200);
      const item = summary.data!.items[0]!;
      expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(2_000);
      expect(item).not.toHaveProperty('body');
      const { body: _body, ...rest } = whole;
      expect(item).toEqual({ ...rest, excerpt: expect.any(String) });
      const excerpt = (item as { excerpt: string }).excerpt;
      expect(excerpt).toMatch(/^Week 9 The mill turns at last: the pull request has it\. gear gear /);
      expect(excerpt).toMatch(/ gear…$/);
      expect(excerpt.length).toBeLessThanOrEqual(281);
      // The default stays the whole post, as it was before view existed.
      expect((await list()).data!.items[0]).toEqual(whole);
      expect((await list('full')).data!.items[0]).toEqual(whole);
    }
    const wrong = await raw(t, 'GET', `/posts?view=brief`, { token: eve.token });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('gives a short post its whole text as the excerpt, without a mark that it was cut', async () => {
    const post = await write(ada, { body: 'Tom &amp; Jerry <b>bold</b> *fast*' });
    const page = (
      await api.listPosts({ client: eve.client, query: { author: ada.user.username, view: 'summary', limit: 1 } })
    ).data!;
    expect(page.items[0]).toMatchObject({ id: post.id, excerpt: 'Tom & Jerry bold fast' });
  });
});
