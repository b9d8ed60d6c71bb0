import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServer,
  userWithKey,
  uniqueName,
  TEST_RATE_LIMIT,
  type TestServer,
  type TestUser,
  useServer,
} from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { loadContract, listOperations } from '../src/kernel/contract.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';
import { Post } from '../src/posts/post.entity.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

describe('platform', () => {
  it('lists the nine scopes with exactly the operations the spec tags with each', async () => {
    const { data } = await api.listScopes({ client: ada.client });
    expect(data!.items.map((s) => s.id)).toEqual([...SCOPE_IDS]);
    expect(data!.items.find((s) => s.id === 'projects.write')!.label).toBe('Write projects');
    const ops = listOperations(loadContract()).filter((o) => o.access.kind === 'scope');
    const listed = data!.items.flatMap((s) => s.operations.map((o) => `${s.id} ${o.operationId}`)).sort();
    expect(listed).toEqual(ops.map((o) => `${(o.access as { scope: string }).scope} ${o.operationId}`).sort());
    const getProject = data!.items
      .find((s) => s.id === 'projects.read')!
      .operations.find((o) => o.operationId === 'getProject');
    expect(getProject).toEqual({
      operationId: 'getProject',
      method: 'GET',
      path: '/api/v1/projects/{projectId}',
      summary: 'Get a project',
    });
  });

  it('tells the limits it enforces and the versions it speaks', async () => {
    expect((await api.getLimits({ client: ada.client })).data).toEqual({
      rateLimit: {
        requestsPerMinutePerKey: TEST_RATE_LIMIT,
        requestsPerMinutePerUser: 2 * TEST_RATE_LIMIT,
        failedAuthPerMinutePerAddress: TEST_RATE_LIMIT,
      },
      requestCosts: { default: 1, operations: { search: 5, uploadMedia: 20 } },
      pageSize: { default: 20, max: 100 },
      requestBodyBytes: 1048576,
      uploadBytes: 262144,
      imagePixels: 25_000_000,
      storageBytesPerUser: 104_857_600,
      unattachedUploadHours: 24,
      keyLifetimeDays: 366,
      activeKeysPerUser: 50,
      commentDepth: 5,
      tagsPerItem: 10,
    });
    expect((await api.getVersions({ client: ada.client })).data).toEqual({
      apiVersion: (loadContract().info as { version: string }).version,
      mcpProtocolVersions: ['2025-11-25', '2025-06-18', '2025-03-26'],
    });
  });

  it('counts popular tags from visible posts and public projects only', async () => {
    const popular = uniqueName('tag').replace('-', '');
    const secret = uniqueName('tag').replace('-', '');
    for (let i = 0; i < 3; i++)
      await api.createPost({ client: ada.client, body: { title: 't', body: 'b', tags: [popular] } });
    await api.createProject({ client: ada.client, body: { name: uniqueName('P'), tags: [popular.toUpperCase()] } });
    const priv = (
      await api.createProject({
        client: ada.client,
        body: { name: uniqueName('P'), visibility: 'private', tags: [secret] },
      })
    ).data!;
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: priv.id, title: 't', body: 'b', tags: [secret] },
    });
    const hidden = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b', tags: [secret] } }))
      .data!;
    await t.db.orm.em.fork().nativeUpdate(Post, { id: hidden.id }, { hiddenAt: new Date() });

    const { data } = await api.listPopularTags({ client: ada.client, query: { limit: 100 } });
    expect(data!.items.find((x) => x.name === popular)?.count).toBe(4);
    expect(data!.items.find((x) => x.name === secret)).toBeUndefined();
    const counts = data!.items.map((x) => x.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('keeps the tag and the skill "null" as the text it is (PostgreSQL reads an unquoted null as NULL)', async () => {
    const post = (await api.createPost({ client: ada.client, body: { title: 't', body: 'b', tags: ['null', 'NULL'] } }))
      .data!;
    expect(post.tags).toEqual(['null']);
    expect((await api.getPost({ client: ada.client, path: { postId: post.id } })).data!.tags).toEqual(['null']);
    const project = (
      await api.createProject({
        client: ada.client,
        body: { name: uniqueName('P'), tags: ['Null'], wantedSkills: ['null'] },
      })
    ).data!;
    const read = (await api.getProject({ client: ada.client, path: { projectId: project.id } })).data!;
    expect([read.tags, read.wantedSkills]).toEqual([['null'], ['null']]);
    const tags = await api.listPopularTags({ client: ada.client, query: { limit: 100 } });
    expect(tags.error).toBeUndefined();
    expect(tags.data!.items.find((x) => x.name === 'null')?.count).toBeGreaterThanOrEqual(2);
    const skills = await api.listPopularSkills({ client: ada.client, query: { limit: 100 } });
    expect(skills.data!.items.find((x) => x.name === 'null')?.count).toBeGreaterThanOrEqual(1);
    const [row] = await t.db.orm.em
      .fork()
      .getConnection()
      .execute<{ nulls: number }[]>(
        'select count(*)::int as nulls from posts where array_position(tags, null) is not null',
      );
    expect(row!.nulls).toBe(0);
  });

  it('counts popular skills', async () => {
    const skill = uniqueName('skill').replace('-', '');
    await api.createProject({ client: ada.client, body: { name: uniqueName('P'), wantedSkills: [skill] } });
    await api.createProject({ client: ada.client, body: { name: uniqueName('P'), wantedSkills: [skill] } });
    const { data } = await api.listPopularSkills({ client: ada.client, query: { limit: 100 } });
    expect(data!.items.find((x) => x.name === skill)?.count).toBe(2);
  });

  it('counts public things', async () => {
    const before = (await api.getStats({ client: ada.client })).data!;
    const pub = (await api.createProject({ client: ada.client, body: { name: uniqueName('P') } })).data!;
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('P'), visibility: 'private' } })
    ).data!;
    await api.createMilestone({ client: ada.client, path: { projectId: pub.id }, body: { title: 'm' } });
    await api.createMilestone({ client: ada.client, path: { projectId: priv.id }, body: { title: 'm' } });
    const log = (
      await api.createPost({
        client: ada.client,
        body: { kind: 'build_log', projectId: pub.id, title: 't', body: 'b' },
      })
    ).data!;
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: priv.id, title: 't', body: 'b' },
    });
    await api.createComment({ client: ada.client, path: { postId: log.id }, body: { body: 'c' } });
    await userWithKey(t);
    const after = (await api.getStats({ client: ada.client })).data!;
    expect({
      users: after.users - before.users,
      projects: after.projects - before.projects,
      milestones: after.milestones - before.milestones,
      posts: after.posts - before.posts,
      buildLogs: after.buildLogs - before.buildLogs,
      comments: after.comments - before.comments,
    }).toEqual({ users: 1, projects: 1, milestones: 1, posts: 1, buildLogs: 1, comments: 1 });
    // Counted for each request on this server (COUNTS_CACHE_SECONDS 0): each answer says when.
    expect(Date.parse(after.countedAt)).toBeGreaterThan(Date.parse(before.countedAt));
  });
});

describe('platform counts shared by every caller (COUNTS_CACHE_SECONDS)', () => {
  let shared: TestServer;
  let bob: TestUser;
  beforeAll(async () => {
    shared = await startServer({ countsCacheSeconds: 60 });
    bob = await userWithKey(shared);
  });
  afterAll(async () => {
    await shared?.close();
  });

  it('answers concurrent callers from one count, and the same count until it is a minute old', async () => {
    const started = Date.now();
    const first = await Promise.all(Array.from({ length: 8 }, () => api.getStats({ client: bob.client })));
    const countedAt = first[0]!.data!.countedAt;
    for (const r of first) expect(r.data).toEqual(first[0]!.data);
    expect(Date.parse(countedAt)).toBeGreaterThanOrEqual(started - 1);
    expect(Date.parse(countedAt)).toBeLessThanOrEqual(Date.now());

    await api.createProject({ client: bob.client, body: { name: uniqueName('P'), tags: ['counted'] } });
    const again = (await api.getStats({ client: bob.client })).data!;
    expect(again).toEqual(first[0]!.data); // the new project is not counted yet, and the answer says when it was counted
  });

  it('counts tags once for the largest page and answers every limit from that count', async () => {
    const tag = uniqueName('tag').replace('-', '');
    const all = (await api.listPopularTags({ client: bob.client, query: { limit: 100 } })).data!;
    const one = (await api.listPopularTags({ client: bob.client, query: { limit: 1 } })).data!;
    const byDefault = (await api.listPopularTags({ client: bob.client })).data!;
    expect(one).toEqual({ items: all.items.slice(0, 1), countedAt: all.countedAt });
    expect(byDefault).toEqual({ items: all.items.slice(0, 20), countedAt: all.countedAt });

    for (let i = 0; i < 3; i++)
      await api.createPost({ client: bob.client, body: { title: 't', body: 'b', tags: [tag] } });
    expect((await api.listPopularTags({ client: bob.client, query: { limit: 100 } })).data).toEqual(all);
    const skills = (await api.listPopularSkills({ client: bob.client, query: { limit: 100 } })).data!;
    expect((await api.listPopularSkills({ client: bob.client, query: { limit: 100 } })).data).toEqual(skills);
  });
});
