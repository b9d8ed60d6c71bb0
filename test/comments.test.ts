import { describe, expect, it } from 'vitest';
import { raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Comment } from '../src/comments/comment.entity.js';
import { Post } from '../src/posts/post.entity.js';

const {
  t,
  users: { ada, grace, eve },
} = useServer({ users: { ada: 'all', grace: 'all', eve: 'all' } });

const newPost = async () =>
  (await api.createPost({ client: ada.client, body: { title: uniqueName('p'), body: 'b' } })).data!;
const comment = async (who: TestUser, postId: string, body: string, parentId?: string) => {
  const res = await api.createComment({
    client: who.client,
    path: { postId },
    body: { body, ...(parentId ? { parentId } : {}) },
  });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
};
const count = async (postId: string) =>
  (await api.getPost({ client: ada.client, path: { postId } })).data!.commentCount;
const thread = async (postId: string) =>
  (await api.listComments({ client: ada.client, path: { postId }, query: { limit: 100 } })).data!.items.map((c) => [
    c.body,
    c.depth,
    c.deleted,
  ]);

describe('comments', () => {
  it('threads replies with parentId and depth, oldest first, and counts them', async () => {
    const post = await newPost();
    const top = await comment(grace, post.id, 'top');
    expect(top).toMatchObject({
      postId: post.id,
      parentId: null,
      depth: 0,
      replyCount: 0,
      deleted: false,
      author: { username: grace.user.username },
    });
    const reply = await comment(ada, post.id, 'reply', top.id);
    expect(reply).toMatchObject({ parentId: top.id, depth: 1 });
    await comment(grace, post.id, 'second top');
    expect(await thread(post.id)).toEqual([
      ['top', 0, false],
      ['reply', 1, false],
      ['second top', 0, false],
    ]);
    expect(await count(post.id)).toBe(3);
    expect((await api.getComment({ client: ada.client, path: { commentId: top.id } })).data!.replyCount).toBe(1);
  });

  it('bounds the depth and refuses a parent from another post (422)', async () => {
    const post = await newPost();
    let parent = await comment(ada, post.id, 'd0');
    for (let d = 1; d < 5; d++) parent = await comment(ada, post.id, `d${d}`, parent.id);
    expect(parent.depth).toBe(4);
    const tooDeep = await api.createComment({
      client: ada.client,
      path: { postId: post.id },
      body: { body: 'd5', parentId: parent.id },
    });
    expect(tooDeep.response?.status).toBe(422);
    const other = await newPost();
    const cross = await api.createComment({
      client: ada.client,
      path: { postId: other.id },
      body: { body: 'x', parentId: parent.id },
    });
    expect(cross.response?.status).toBe(422);
  });

  it('lets only the author edit or delete', async () => {
    const post = await newPost();
    const c = await comment(grace, post.id, 'mine');
    expect(
      (await api.updateComment({ client: ada.client, path: { commentId: c.id }, body: { body: 'x' } })).response
        ?.status,
    ).toBe(403);
    expect((await api.deleteComment({ client: ada.client, path: { commentId: c.id } })).response?.status).toBe(403);
    const edited = await api.updateComment({
      client: grace.client,
      path: { commentId: c.id },
      body: { body: 'edited' },
    });
    expect(edited.data!.body).toBe('edited');
    const extra = await raw(t, 'PATCH', `/comments/${c.id}`, {
      token: grace.token,
      body: { body: 'x', postId: post.id },
    });
    expect(extra.status).toBe(400);
  });

  it('keeps a deleted comment with replies as a placeholder, and removes it with its last reply', async () => {
    const post = await newPost();
    const top = await comment(grace, post.id, 'top');
    const reply = await comment(ada, post.id, 'reply', top.id);
    expect((await api.deleteComment({ client: grace.client, path: { commentId: top.id } })).response?.status).toBe(204);
    expect(await thread(post.id)).toEqual([
      [null, 0, true],
      ['reply', 1, false],
    ]);
    const placeholder = (await api.getComment({ client: ada.client, path: { commentId: top.id } })).data!;
    expect(placeholder).toMatchObject({ deleted: true, body: null, author: null, replyCount: 1 });
    expect(await count(post.id)).toBe(1);
    expect(
      (await api.updateComment({ client: grace.client, path: { commentId: top.id }, body: { body: 'back' } })).response
        ?.status,
    ).toBe(409);
    const replyToDeleted = await api.createComment({
      client: ada.client,
      path: { postId: post.id },
      body: { body: 'x', parentId: top.id },
    });
    expect(replyToDeleted.response?.status).toBe(422);

    await api.deleteComment({ client: ada.client, path: { commentId: reply.id } });
    expect(await thread(post.id)).toEqual([]);
    expect(await count(post.id)).toBe(0);
    expect(await t.db.orm.em.fork().count(Comment, { post: post.id })).toBe(0);
  });

  it('keeps counts exact under concurrent comments and deletes', async () => {
    const post = await newPost();
    const first = await Promise.all(
      Array.from({ length: 10 }, (_, i) => comment(i % 2 ? ada : grace, post.id, `c${i}`)),
    );
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        api.createComment({
          client: grace.client,
          path: { postId: post.id },
          body: { body: `r${i}`, parentId: first[0]!.id },
        }),
      ),
      ...first.slice(1, 6).map((c) =>
        api.deleteComment({
          client: c.author!.username === ada.user.username ? ada.client : grace.client,
          path: { commentId: c.id },
        }),
      ),
    ]);
    expect(await count(post.id)).toBe(15);
    expect((await api.getComment({ client: ada.client, path: { commentId: first[0]!.id } })).data!.replyCount).toBe(10);
    const listed = (await api.listComments({ client: ada.client, path: { postId: post.id }, query: { limit: 100 } }))
      .data!.items;
    expect(listed.filter((c) => !c.deleted).length).toBe(15);
  });

  it('goes away with its post', async () => {
    const post = await newPost();
    const c = await comment(grace, post.id, 'bye');
    await api.deletePost({ client: ada.client, path: { postId: post.id } });
    expect((await api.getComment({ client: grace.client, path: { commentId: c.id } })).response?.status).toBe(404);
  });

  it('shows in the list field for field what GET /comments/{id} shows, to each reader, hidden and deleted ones too', async () => {
    const post = await newPost();
    const top = await comment(grace, post.id, 'top');
    await comment(ada, post.id, 'reply', top.id);
    const hidden = await comment(grace, post.id, 'spam');
    await t.db.orm.em.fork().nativeUpdate(Comment, { id: hidden.id }, { hiddenAt: new Date() });
    await api.deleteComment({ client: grace.client, path: { commentId: top.id } }); // a placeholder: it has a reply
    for (const reader of [ada, grace, eve]) {
      const listed = (await api.listComments({ client: reader.client, path: { postId: post.id } })).data!.items;
      expect(listed).toHaveLength(3);
      for (const c of listed)
        expect(c).toEqual((await api.getComment({ client: reader.client, path: { commentId: c.id } })).data);
    }
    const seenBy = async (who: TestUser) =>
      (await api.getComment({ client: who.client, path: { commentId: hidden.id } })).data!;
    expect(await seenBy(grace)).toMatchObject({
      hidden: true,
      body: 'spam',
      author: { username: grace.user.username },
    });
    expect(await seenBy(eve)).toMatchObject({ hidden: true, body: null });
    expect(await seenBy(ada)).toMatchObject({ deleted: false, postId: post.id, parentId: null, depth: 0 });
  });

  it('pages oldest first by cursor to the last comment', async () => {
    const post = await newPost();
    const written: string[] = [];
    for (let i = 0; i < 5; i++) written.push((await comment(i % 2 ? ada : grace, post.id, `c${i}`)).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (
        await api.listComments({
          client: eve.client,
          path: { postId: post.id },
          query: { limit: 2, ...(cursor ? { cursor } : {}) },
        })
      ).data!;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((c) => c.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(seen).toEqual(written);
    expect(pages).toBe(3);
    const empty = await newPost();
    expect((await api.listComments({ client: eve.client, path: { postId: empty.id } })).data).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it('keeps the comments of a post on a private project or of a hidden post from those who may not read it (404, whatever the cursor)', async () => {
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('Secret'), visibility: 'private' } })
    ).data!;
    await api.addProjectMember({
      client: ada.client,
      path: { projectId: priv.id },
      body: { username: grace.user.username },
    });
    const secret = (
      await api.createPost({
        client: ada.client,
        body: { kind: 'build_log', projectId: priv.id, title: uniqueName('s'), body: 'b' },
      })
    ).data!;
    const onSecret = await comment(grace, secret.id, 'members only');
    const hiddenPost = await newPost();
    const onHidden = await comment(grace, hiddenPost.id, 'under a hidden post');
    await t.db.orm.em.fork().nativeUpdate(Post, { id: hiddenPost.id }, { hiddenAt: new Date() });

    for (const [postId, commentId] of [
      [secret.id, onSecret.id],
      [hiddenPost.id, onHidden.id],
    ] as const) {
      expect((await api.getComment({ client: eve.client, path: { commentId } })).response?.status).toBe(404);
      expect((await api.listComments({ client: eve.client, path: { postId } })).response?.status).toBe(404);
      const badCursor = await raw(t, 'GET', `/posts/${postId}/comments?cursor=not-a-cursor`, { token: eve.token });
      expect(badCursor.status).toBe(404);
      expect(badCursor.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(
        (await api.updateComment({ client: eve.client, path: { commentId }, body: { body: 'x' } })).response?.status,
      ).toBe(404);
      expect((await api.deleteComment({ client: eve.client, path: { commentId } })).response?.status).toBe(404);
    }
    // The project's member reads the private one's; the hidden post's author reads its own.
    expect((await api.getComment({ client: grace.client, path: { commentId: onSecret.id } })).data!.body).toBe(
      'members only',
    );
    expect(
      (await api.listComments({ client: grace.client, path: { postId: secret.id } })).data!.items.map((c) => c.id),
    ).toEqual([onSecret.id]);
    expect(
      (await api.listComments({ client: ada.client, path: { postId: hiddenPost.id } })).data!.items.map((c) => c.id),
    ).toEqual([onHidden.id]);
    // A cursor that does not decode on a post the caller may read is the caller's mistake: 400.
    const readable = await raw(t, 'GET', `/posts/${secret.id}/comments?cursor=not-a-cursor`, { token: grace.token });
    expect(readable.status).toBe(400);
    // Nothing the refused calls tried changed anything.
    expect((await t.db.orm.em.fork().findOneOrFail(Comment, { id: onSecret.id })).body).toBe('members only');
  });
});
