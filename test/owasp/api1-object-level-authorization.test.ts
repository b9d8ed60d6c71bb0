/** OWASP API1:2023 Broken Object Level Authorization — other people's ids, every kind of object. */
import { describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, fileForm, useServer } from '../harness.js';
import * as api from '../../codegen/generated/api/sdk.gen.js';
import { png } from '../fixtures/images.js';

const {
  t,
  users: { victim, attacker },
} = useServer({ users: { victim: 'all', attacker: 'all' } });

describe('API1 object-level authorization', () => {
  it("cannot read or touch someone's private project, its roadmap, members or logs", async () => {
    const p = (
      await api.createProject({ client: victim.client, body: { name: uniqueName('Secret'), visibility: 'private' } })
    ).data!;
    const m = (
      await api.createMilestone({ client: victim.client, path: { projectId: p.id }, body: { title: 'secret plan' } })
    ).data!;
    const attempts = [
      ['GET', `/projects/${p.id}`],
      ['PATCH', `/projects/${p.id}`, { name: 'owned' }],
      ['DELETE', `/projects/${p.id}`],
      ['GET', `/projects/${p.id}/milestones`],
      ['GET', `/projects/${p.id}/milestones/${m.id}`],
      ['PATCH', `/projects/${p.id}/milestones/${m.id}`, { title: 'x' }],
      ['DELETE', `/projects/${p.id}/milestones/${m.id}`],
      ['GET', `/projects/${p.id}/members`],
      ['POST', `/projects/${p.id}/members`, { username: attacker.user.username }],
      ['GET', `/projects/${p.id}/build-logs`],
    ] as const;
    for (const [method, path, body] of attempts) {
      expect((await raw(t, method, path, { token: attacker.token, body })).status, `${method} ${path}`).toBe(404);
    }
    expect(
      (await api.getMilestone({ client: victim.client, path: { projectId: p.id, milestoneId: m.id } })).data!.title,
    ).toBe('secret plan');
  });

  it("cannot reach a milestone through one's own project", async () => {
    const theirs = (await api.createProject({ client: victim.client, body: { name: uniqueName('P') } })).data!;
    const m = (
      await api.createMilestone({ client: victim.client, path: { projectId: theirs.id }, body: { title: 'theirs' } })
    ).data!;
    const mine = (await api.createProject({ client: attacker.client, body: { name: uniqueName('P') } })).data!;
    for (const [method, body] of [['GET'], ['PATCH', { title: 'stolen' }], ['DELETE']] as const) {
      expect(
        (await raw(t, method, `/projects/${mine.id}/milestones/${m.id}`, { token: attacker.token, body })).status,
      ).toBe(404);
    }
    const reorder = await api.reorderMilestones({
      client: attacker.client,
      path: { projectId: mine.id },
      body: { milestoneIds: [m.id] },
    });
    expect(reorder.response?.status).toBe(422);
    expect(
      (await api.getMilestone({ client: victim.client, path: { projectId: theirs.id, milestoneId: m.id } })).data,
    ).toMatchObject({ title: 'theirs', position: 1 });
  });

  it("cannot edit or delete someone's public project, post, comment, job or reaction", async () => {
    const p = (await api.createProject({ client: victim.client, body: { name: uniqueName('P') } })).data!;
    const post = (await api.createPost({ client: victim.client, body: { title: 't', body: 'b' } })).data!;
    const comment = (await api.createComment({ client: victim.client, path: { postId: post.id }, body: { body: 'c' } }))
      .data!;
    const job = (
      await api.createJob({
        client: victim.client,
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
    await api.addReaction({ client: victim.client, path: { postId: post.id }, body: { kind: 'heart' } });
    const attempts = [
      ['PATCH', `/projects/${p.id}`, { name: 'x' }],
      ['DELETE', `/projects/${p.id}`],
      ['POST', `/projects/${p.id}/milestones`, { title: 'x' }],
      ['DELETE', `/projects/${p.id}/members/${victim.user.username}`],
      ['PATCH', `/posts/${post.id}`, { title: 'x' }],
      ['DELETE', `/posts/${post.id}`],
      ['PATCH', `/comments/${comment.id}`, { body: 'x' }],
      ['DELETE', `/comments/${comment.id}`],
      ['PATCH', `/jobs/${job.id}`, { title: 'x' }],
      ['POST', `/jobs/${job.id}/close`],
      ['DELETE', `/jobs/${job.id}`],
    ] as const;
    for (const [method, path, body] of attempts) {
      expect([403, 409], `${method} ${path}`).toContain(
        (await raw(t, method, path, { token: attacker.token, body })).status,
      );
    }
    // Taking back "a heart" only ever removes one's own.
    expect(
      (await api.removeReaction({ client: attacker.client, path: { postId: post.id, kind: 'heart' } })).response
        ?.status,
    ).toBe(404);
    expect((await api.getReactions({ client: victim.client, path: { postId: post.id } })).data!.counts).toEqual({
      heart: 1,
    });
    expect((await api.getJob({ client: victim.client, path: { jobId: job.id } })).data!.status).toBe('open');
  });

  it("cannot show someone else's uploads as one's own", async () => {
    const theirs = (await raw(t, 'POST', '/media', { token: victim.token, body: fileForm(png(2, 2)) })).json;
    const res = await api.createPost({
      client: attacker.client,
      body: { title: 't', body: 'b', mediaIds: [theirs.id] },
    });
    expect(res.response?.status).toBe(422);
    // Editing a post is held to the same rule, with the same problem (it was a 500 HTML page).
    const own = (await api.createPost({ client: attacker.client, body: { title: 't', body: 'b' } })).data!;
    for (const mediaIds of [[theirs.id], ['01a00000-0000-7000-8000-000000000000']]) {
      const edit = await raw(t, 'PATCH', `/posts/${own.id}`, { token: attacker.token, body: { mediaIds } });
      expect(edit.status).toBe(422);
      expect(edit.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(edit.json.type).toBe('/problems/unprocessable');
      expect(edit.text).not.toMatch(/node_modules|<html/i);
    }
    expect((await api.getPost({ client: attacker.client, path: { postId: own.id } })).data!.mediaIds).toEqual([]);
  });

  it("cannot read an image shown only by a private project's build log, not even as a removed member", async () => {
    const p = (
      await api.createProject({ client: victim.client, body: { name: uniqueName('Secret'), visibility: 'private' } })
    ).data!;
    await api.addProjectMember({
      client: victim.client,
      path: { projectId: p.id },
      body: { username: attacker.user.username },
    });
    const image = (await raw(t, 'POST', '/media', { token: victim.token, body: fileForm(png(5, 3)) })).json;
    const shared = (await raw(t, 'POST', '/media', { token: victim.token, body: fileForm(png(6, 3)) })).json;
    await api.createPost({
      client: victim.client,
      body: { kind: 'build_log', projectId: p.id, title: 'private log', body: 'b', mediaIds: [image.id, shared.id] },
    });
    await api.createPost({ client: victim.client, body: { title: 'public post', body: 'b', mediaIds: [shared.id] } });
    const reads = (token: string, id: string) =>
      Promise.all([raw(t, 'GET', `/media/${id}`, { token }), raw(t, 'GET', `/media/${id}/content`, { token })]);

    // A member reads it with the log; once removed, it is gone for them as the log is.
    for (const res of await reads(attacker.token, image.id)) expect(res.status).toBe(200);
    await api.removeProjectMember({
      client: victim.client,
      path: { projectId: p.id, username: attacker.user.username },
    });
    for (const res of await reads(attacker.token, image.id)) {
      expect(res.status).toBe(404);
      expect(res.json.type).toBe('/problems/not-found');
    }
    const stranger = await userWithKey(t, ['content.read']);
    for (const res of await reads(stranger.token, image.id)) expect(res.status).toBe(404);
    // The uploader always; an image also shown by a public post, anyone.
    for (const res of await reads(victim.token, image.id)) expect(res.status).toBe(200);
    for (const res of await reads(stranger.token, shared.id)) expect(res.status).toBe(200);
  });

  it('keeps an image private until a readable post shows it, and private again once the last one is gone', async () => {
    const stranger = await userWithKey(t, ['content.read']);
    const reads = (token: string, id: string) =>
      Promise.all([raw(t, 'GET', `/media/${id}`, { token }), raw(t, 'GET', `/media/${id}/content`, { token })]);
    const statuses = async (id: string) => (await reads(stranger.token, id)).map((r) => r.status);

    // Uploaded, not attached: its uploader's alone.
    const image = (await raw(t, 'POST', '/media', { token: victim.token, body: fileForm(png(7, 3)) })).json;
    expect(await statuses(image.id)).toEqual([404, 404]);
    for (const res of await reads(victim.token, image.id)) expect(res.status).toBe(200);

    // Shown by a private build log and then the log is deleted: it stays private.
    const p = (
      await api.createProject({ client: victim.client, body: { name: uniqueName('Hidden'), visibility: 'private' } })
    ).data!;
    const log = (
      await api.createPost({
        client: victim.client,
        body: { kind: 'build_log', projectId: p.id, title: 'private log', body: 'b', mediaIds: [image.id] },
      })
    ).data!;
    expect(await statuses(image.id)).toEqual([404, 404]);
    await api.deletePost({ client: victim.client, path: { postId: log.id } });
    expect(await statuses(image.id)).toEqual([404, 404]);

    // Shown by a public post: anyone's; that post deleted: its uploader's alone again.
    const post = (
      await api.createPost({ client: victim.client, body: { title: 'public', body: 'b', mediaIds: [image.id] } })
    ).data!;
    expect(await statuses(image.id)).toEqual([200, 200]);
    await api.deletePost({ client: victim.client, path: { postId: post.id } });
    expect(await statuses(image.id)).toEqual([404, 404]);
  });
});
