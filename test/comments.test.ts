import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, uniqueName, type TestServer, type TestUser } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Comment } from '../src/comments/comment.entity.js';

let t: TestServer;
let ada: TestUser;
let grace: TestUser;
beforeAll(async () => {
  t = await startServer();
  [ada, grace] = [await userWithKey(t), await userWithKey(t)];
});
afterAll(async () => {
  await t?.close();
});

const newPost = async () => (await api.createPost({ client: ada.client, body: { title: uniqueName('p'), body: 'b' } })).data!;
const comment = async (who: TestUser, postId: string, body: string, parentId?: string) => {
  const res = await api.createComment({ client: who.client, path: { postId }, body: { body, ...(parentId ? { parentId } : {}) } });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
};
const count = async (postId: string) => (await api.getPost({ client: ada.client, path: { postId } })).data!.commentCount;
const thread = async (postId: string) =>
  (await api.listComments({ client: ada.client, path: { postId }, query: { limit: 100 } })).data!.items.map((c) => [c.body, c.depth, c.deleted]);

describe('comments', () => {
  it('threads replies with parentId and depth, oldest first, and counts them', async () => {
    const post = await newPost();
    const top = await comment(grace, post.id, 'top');
    expect(top).toMatchObject({ postId: post.id, parentId: null, depth: 0, replyCount: 0, deleted: false, author: { username: grace.user.username } });
    const reply = await comment(ada, post.id, 'reply', top.id);
    expect(reply).toMatchObject({ parentId: top.id, depth: 1 });
    await comment(grace, post.id, 'second top');
    expect(await thread(post.id)).toEqual([['top', 0, false], ['reply', 1, false], ['second top', 0, false]]);
    expect(await count(post.id)).toBe(3);
    expect((await api.getComment({ client: ada.client, path: { commentId: top.id } })).data!.replyCount).toBe(1);
  });

  it('bounds the depth and refuses a parent from another post (422)', async () => {
    const post = await newPost();
    let parent = await comment(ada, post.id, 'd0');
    for (let d = 1; d < 5; d++) parent = await comment(ada, post.id, `d${d}`, parent.id);
    expect(parent.depth).toBe(4);
    const tooDeep = await api.createComment({ client: ada.client, path: { postId: post.id }, body: { body: 'd5', parentId: parent.id } });
    expect(tooDeep.response?.status).toBe(422);
    const other = await newPost();
    const cross = await api.createComment({ client: ada.client, path: { postId: other.id }, body: { body: 'x', parentId: parent.id } });
    expect(cross.response?.status).toBe(422);
  });

  it('lets only the author edit or delete', async () => {
    const post = await newPost();
    const c = await comment(grace, post.id, 'mine');
    expect((await api.updateComment({ client: ada.client, path: { commentId: c.id }, body: { body: 'x' } })).response?.status).toBe(403);
    expect((await api.deleteComment({ client: ada.client, path: { commentId: c.id } })).response?.status).toBe(403);
    const edited = await api.updateComment({ client: grace.client, path: { commentId: c.id }, body: { body: 'edited' } });
    expect(edited.data!.body).toBe('edited');
    const extra = await raw(t, 'PATCH', `/comments/${c.id}`, { token: grace.token, body: { body: 'x', postId: post.id } });
    expect(extra.status).toBe(400);
  });

  it('keeps a deleted comment with replies as a placeholder, and removes it with its last reply', async () => {
    const post = await newPost();
    const top = await comment(grace, post.id, 'top');
    const reply = await comment(ada, post.id, 'reply', top.id);
    expect((await api.deleteComment({ client: grace.client, path: { commentId: top.id } })).response?.status).toBe(204);
    expect(await thread(post.id)).toEqual([[null, 0, true], ['reply', 1, false]]);
    const placeholder = (await api.getComment({ client: ada.client, path: { commentId: top.id } })).data!;
    expect(placeholder).toMatchObject({ deleted: true, body: null, author: null, replyCount: 1 });
    expect(await count(post.id)).toBe(1);
    expect((await api.updateComment({ client: grace.client, path: { commentId: top.id }, body: { body: 'back' } })).response?.status).toBe(409);
    const replyToDeleted = await api.createComment({ client: ada.client, path: { postId: post.id }, body: { body: 'x', parentId: top.id } });
    expect(replyToDeleted.response?.status).toBe(422);

    await api.deleteComment({ client: ada.client, path: { commentId: reply.id } });
    expect(await thread(post.id)).toEqual([]);
    expect(await count(post.id)).toBe(0);
    expect(await t.db.orm.em.fork().count(Comment, { post: post.id })).toBe(0);
  });

  it('keeps counts exact under concurrent comments and deletes', async () => {
    const post = await newPost();
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => comment(i % 2 ? ada : grace, post.id, `c${i}`)));
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => api.createComment({ client: grace.client, path: { postId: post.id }, body: { body: `r${i}`, parentId: first[0]!.id } })),
      ...first.slice(1, 6).map((c) => api.deleteComment({ client: c.author!.username === ada.user.username ? ada.client : grace.client, path: { commentId: c.id } })),
    ]);
    expect(await count(post.id)).toBe(15);
    expect((await api.getComment({ client: ada.client, path: { commentId: first[0]!.id } })).data!.replyCount).toBe(10);
    const listed = (await api.listComments({ client: ada.client, path: { postId: post.id }, query: { limit: 100 } })).data!.items;
    expect(listed.filter((c) => !c.deleted).length).toBe(15);
  });

  it('goes away with its post', async () => {
    const post = await newPost();
    const c = await comment(grace, post.id, 'bye');
    await api.deletePost({ client: ada.client, path: { postId: post.id } });
    expect((await api.getComment({ client: grace.client, path: { commentId: c.id } })).response?.status).toBe(404);
  });
});
