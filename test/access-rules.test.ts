/**
 * The read rules (projectReadable, postReadable, mediaReadable: src/*\/*.queries.ts) agree
 * everywhere they are used. fast-check makes random worlds of users, projects (public or
 * private), memberships, posts (hidden or not, on a project or not), comments and images; for
 * every user, each item read, each list, the build logs and search must show exactly what a
 * plain model of the rules says that user may see, and nothing else.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/db/database.js';
import { uniqueName } from './harness.js';
import { reads } from '../src/db/reads.js';
import type { Actor } from '../src/kernel/actor.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';
import { User } from '../src/users/user.entity.js';
import { Project, ProjectMember } from '../src/projects/project.entity.js';
import { Post } from '../src/posts/post.entity.js';
import { Comment } from '../src/comments/comment.entity.js';
import { Media } from '../src/media/media.entity.js';
import { assertCanReadProject, listProjects } from '../src/projects/projects.service.js';
import { listBuildLogs, listPosts, readPost } from '../src/posts/posts.service.js';
import { readComment } from '../src/comments/comments.service.js';
import { getMedia } from '../src/media/media.service.js';
import { search } from '../src/search/search.service.js';

const USERS = 3;
const world = fc.record({
  projects: fc.array(fc.record({ owner: fc.nat(USERS - 1), private: fc.boolean() }), { maxLength: 4 }),
  members: fc.uniqueArray(fc.record({ project: fc.nat(3), user: fc.nat(USERS - 1) }), {
    selector: (m) => `${m.project}/${m.user}`,
    maxLength: 4,
  }),
  posts: fc.array(
    fc.record({ author: fc.nat(USERS - 1), project: fc.option(fc.nat(3)), hidden: fc.boolean(), image: fc.boolean() }),
    { maxLength: 6 },
  ),
  /** Images no post shows (yet): readable by anyone. */
  looseImages: fc.array(fc.nat(USERS - 1), { maxLength: 2 }),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

/** What the rules say, in plain code. */
function model(w: World) {
  const projects = w.projects.map((p, i) => ({ ...p, i }));
  const isMember = (u: number, p: number) => w.members.some((m) => m.project === p && m.user === u);
  const projectVisible = (u: number, p: number) => !projects[p]!.private || projects[p]!.owner === u || isMember(u, p);
  const posts = w.posts.map((po, i) => ({
    ...po,
    i,
    project: po.project !== null && po.project < projects.length ? po.project : null,
  }));
  const postVisible = (u: number, po: (typeof posts)[number]) =>
    (!po.hidden || po.author === u) && (po.project === null || projectVisible(u, po.project));
  return { projects, posts, projectVisible, postVisible };
}

let db: Database;
let users: User[];
const actor = (u: number): Actor => ({ userId: users[u]!.id, via: 'key', scopes: SCOPE_IDS });

beforeAll(async () => {
  db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '', inMemory: true });
  const em = db.orm.em.fork();
  // Names of their own: the suite may run again on the same PostgreSQL database.
  users = Array.from({ length: USERS }, (_, i) => {
    const username = uniqueName('rules');
    return em.create(User, { username, email: `${username}@example.com`, displayName: `Rules ${i}` });
  });
  await em.flush();
});
afterAll(async () => {
  await db?.close();
});

/** Writes the world (after removing the last one's), as entities; the ids in the world's order. */
async function write(w: World) {
  const em = db.orm.em.fork();
  await sql`truncate projects, posts, media cascade`.execute(reads(em));
  const m = model(w);
  const projects = m.projects.map((p) =>
    em.create(Project, {
      owner: users[p.owner]!,
      name: `Zebra project ${p.i}`,
      slug: `zebra-${p.i}`,
      visibility: p.private ? 'private' : 'public',
    }),
  );
  for (const member of w.members) {
    const project = projects[member.project];
    if (project && project.owner.id !== users[member.user]!.id)
      em.create(ProjectMember, { project, user: users[member.user]! });
  }
  const image = (u: number, n: string) =>
    em.create(Media, {
      uploader: users[u]!,
      sha256: createHash('sha256').update(n).digest('hex'),
      contentType: 'image/png',
      byteSize: 1,
      width: 1,
      height: 1,
    });
  const images = m.posts.map((po) => (po.image ? image(po.author, `post-${po.i}`) : null));
  const loose = w.looseImages.map((u, i) => image(u, `loose-${i}`));
  await em.flush(); // the images' ids, before the posts that show them
  const posts = m.posts.map((po) =>
    em.create(Post, {
      author: users[po.author]!,
      kind: po.project === null ? 'post' : 'build_log',
      project: po.project === null ? null : projects[po.project]!,
      title: `Zebra post ${po.i}`,
      body: 'zebra',
      hiddenAt: po.hidden ? new Date() : null,
      mediaIds: images[po.i] ? [images[po.i]!.id] : [],
    }),
  );
  const comments = posts.map((post, i) =>
    em.create(Comment, { post, author: users[m.posts[i]!.author]!, body: 'zebra' }),
  );
  await em.flush();
  return { m, projects, posts, comments, images, loose };
}

const visible = async (read: () => Promise<unknown>) =>
  read().then(
    () => true,
    (err: { status?: number }) => {
      if (err.status !== 404) throw err;
      return false;
    },
  );
const sorted = (ids: string[]) => [...ids].sort();

describe('the read rules', () => {
  it('agree between the item reads, the lists, the build logs, comments, images and search', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const { m, projects, posts, comments, images, loose } = await write(w);
        for (let u = 0; u < USERS; u++) {
          const em = db.orm.em.fork();
          const a = actor(u);
          const seenProjects = m.projects.filter((p) => m.projectVisible(u, p.i)).map((p) => projects[p.i]!.id);
          const seenPosts = m.posts.filter((po) => m.postVisible(u, po)).map((po) => posts[po.i]!.id);
          for (const p of m.projects)
            expect(await visible(() => assertCanReadProject(em, a, projects[p.i]!.id))).toBe(m.projectVisible(u, p.i));
          for (const po of m.posts) {
            expect(await visible(() => readPost(em, a, posts[po.i]!.id))).toBe(m.postVisible(u, po));
            expect(await visible(() => readComment(em, a, comments[po.i]!.id))).toBe(m.postVisible(u, po));
            const img = images[po.i];
            // Shown by one post only: readable by its uploader (the author) or whoever may read that post.
            if (img) expect(await visible(() => getMedia(em, a, img.id))).toBe(po.author === u || m.postVisible(u, po));
          }
          // Shown by no post: its uploader's alone.
          for (const [i, img] of loose.entries())
            expect(await visible(() => getMedia(em, a, img.id))).toBe(w.looseImages[i] === u);
          expect(sorted((await listProjects(em, a, { limit: 100 })).items.map((p) => p.id))).toEqual(
            sorted(seenProjects),
          );
          expect(sorted((await listPosts(em, a, { limit: 100 })).items.map((p) => p.id))).toEqual(sorted(seenPosts));
          for (const p of m.projects.filter((p) => m.projectVisible(u, p.i))) {
            const logs = (await listBuildLogs(em, a, projects[p.i]!.id, { limit: 100 })).items.map((l) => l.id);
            const expected = m.posts
              .filter((po) => po.project === p.i && m.postVisible(u, po))
              .map((po) => posts[po.i]!.id);
            expect(sorted(logs)).toEqual(sorted(expected));
          }
          const found = (await search(em, a, { q: 'zebra', limit: 100 })).items;
          expect(sorted(found.filter((r) => r.type === 'project').map((r) => r.id))).toEqual(sorted(seenProjects));
          expect(sorted(found.filter((r) => r.type === 'post').map((r) => r.id))).toEqual(sorted(seenPosts));
        }
      }),
      { numRuns: 25 },
    );
  });
});
