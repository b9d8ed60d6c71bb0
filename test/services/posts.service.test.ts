/** What a member may post, and who may change a post: at the service, without a server. */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import { createProject } from '../../src/projects/projects.service.js';
import { addMember } from '../../src/projects/members.service.js';
import { createPost, getPost, updatePost } from '../../src/posts/posts.service.js';

const db = useServiceDatabase();

describe('posts at the service', () => {
  it("lets a project's owner and members post build logs to it, and nobody else", async () => {
    const owner = await db.user();
    const member = await db.user();
    const stranger = await db.user();
    const { id: projectId } = await createProject(db.em(), owner.actor, { name: 'Logged' });
    await addMember(db.em(), owner.actor, projectId, member.user.username);
    const log = { kind: 'build_log' as const, projectId, title: 'Day 1', body: 'Wired it up.' };
    expect((await createPost(db.em(), owner.actor, log)).projectId).toBe(projectId);
    expect((await createPost(db.em(), member.actor, log)).author.id).toBe(member.user.id);
    expect(await refusal(createPost(db.em(), stranger.actor, log))).toEqual({ status: 403, code: 'not-a-contributor' });
    expect(
      await refusal(createPost(db.em(), owner.actor, { ...log, projectId: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' })),
    ).toEqual({ status: 422, code: 'unknown-project' });
  });

  it('lets only the author change a post, and shows only images its author uploaded', async () => {
    const author = await db.user();
    const other = await db.user();
    const post = await createPost(db.em(), author.actor, { title: 'Hello', body: 'First.' });
    expect(await refusal(updatePost(db.em(), other.actor, post.id, { title: 'Mine' }))).toEqual({
      status: 403,
      code: 'not-author',
    });
    expect((await updatePost(db.em(), author.actor, post.id, { title: 'Hello again' })).title).toBe('Hello again');
    expect((await getPost(db.em(), other.actor, post.id)).title).toBe('Hello again');
    expect(
      await refusal(createPost(db.em(), author.actor, { title: 'x', body: 'y', mediaIds: [crypto.randomUUID()] })),
    ).toEqual({ status: 422, code: 'unknown-media' });
  });
});
