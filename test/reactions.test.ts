import { describe, expect, it } from 'vitest';
import { userWithKey, raw, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';

const {
  t,
  users: { ada, grace },
} = useServer({ users: { ada: 'all', grace: 'all' } });

const newPost = async () =>
  (await api.createPost({ client: ada.client, body: { title: 'react to me', body: 'b' } })).data!;

describe('reactions', () => {
  it('adds idempotently, counts by kind, and takes back', async () => {
    const post = await newPost();
    const first = await api.addReaction({ client: grace.client, path: { postId: post.id }, body: { kind: 'rocket' } });
    expect(first.response?.status).toBe(201);
    expect(first.data).toEqual({ postId: post.id, total: 1, counts: { rocket: 1 }, mine: ['rocket'] });
    const again = await api.addReaction({ client: grace.client, path: { postId: post.id }, body: { kind: 'rocket' } });
    expect(again.response?.status).toBe(200);
    expect(again.data!.total).toBe(1);
    await api.addReaction({ client: ada.client, path: { postId: post.id }, body: { kind: 'heart' } });
    const seen = await api.getReactions({ client: ada.client, path: { postId: post.id } });
    expect(seen.data).toEqual({ postId: post.id, total: 2, counts: { heart: 1, rocket: 1 }, mine: ['heart'] });
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).data!.reactionCount).toBe(2);

    expect(
      (await api.removeReaction({ client: grace.client, path: { postId: post.id, kind: 'rocket' } })).response?.status,
    ).toBe(204);
    expect(
      (await api.removeReaction({ client: grace.client, path: { postId: post.id, kind: 'rocket' } })).response?.status,
    ).toBe(404);
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).data!.reactionCount).toBe(1);
  });

  it('refuses unknown kinds (400) and invisible posts (404)', async () => {
    const post = await newPost();
    expect(
      (await raw(t, 'POST', `/posts/${post.id}/reactions`, { token: grace.token, body: { kind: 'angry' } })).status,
    ).toBe(400);
    expect((await raw(t, 'DELETE', `/posts/${post.id}/reactions/angry`, { token: grace.token })).status).toBe(400);
    await t.db.orm.em.fork().nativeUpdate(Post, { id: post.id }, { hiddenAt: new Date() });
    expect(
      (await api.addReaction({ client: grace.client, path: { postId: post.id }, body: { kind: 'like' } })).response
        ?.status,
    ).toBe(404);
  });

  it('keeps the count exact under concurrent adds, repeats and removals', async () => {
    const post = await newPost();
    const people = await Promise.all(Array.from({ length: 8 }, () => userWithKey(t)));
    await Promise.all(
      people.flatMap((p) => [
        api.addReaction({ client: p.client, path: { postId: post.id }, body: { kind: 'like' } }),
        api.addReaction({ client: p.client, path: { postId: post.id }, body: { kind: 'like' } }),
        api.addReaction({ client: p.client, path: { postId: post.id }, body: { kind: 'eyes' } }),
      ]),
    );
    await Promise.all(
      people.slice(0, 3).map((p) => api.removeReaction({ client: p.client, path: { postId: post.id, kind: 'eyes' } })),
    );
    const reactions = (await api.getReactions({ client: ada.client, path: { postId: post.id } })).data!;
    expect(reactions.counts).toEqual({ like: 8, eyes: 5 });
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).data!.reactionCount).toBe(13);
  });
});
