/**
 * Posts. A build log is a post of kind build_log attached to a project: written with
 * content.write by the project's owner or a member, listed with projects.read.
 * Who may read a post: anyone, unless it is hidden (its author only) or on a private project
 * (its owner and members only). To everyone else it does not exist (404).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  PostCreate,
  PostUpdate,
  Post as PostDto,
  PostSummary,
  PostView,
} from '../../codegen/generated/api/types.gen.js';
import { Post } from './post.entity.js';
import { User } from '../users/user.entity.js';
import { type Actor, actorId, type Removed } from '../kernel/actor.js';
import { badRequest, forbidden, notFound, ProblemError, unprocessable } from '../kernel/problem.js';
import { cursorList, type CursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { assertCanContributeToProject, assertCanReadProject, type SeenAccess } from '../projects/projects.service.js';
import { presentPost, presentPostSummary, type PostFields } from './posts.presenter.js';
import { EXCERPT_SOURCE } from './excerpt.js';
import {
  buildLogPage,
  buildLogPageAmong,
  buildLogSummaryPage,
  postIsReadable,
  readablePost,
  readablePosts,
} from './posts.queries.js';
import { LAST_ID, rowById } from '../db/reads.js';
import { normaliseTags } from '../kernel/tags.js';
import { markAttached, ownMediaIds } from '../media/media.service.js';
import { recordBuildLogEvent } from './build-log-events.js';
import { type HealthChange, holdPulse, noteBuildLog, refreshPulse } from '../projects/pulse.js';
import { assertMilestonesOf, recountEvidence } from '../milestones/evidence.js';

/** The post as the API shows it, if the actor may read it, else 404. */
export async function readPost(em: EntityManager, actor: Actor, postId: string): Promise<PostFields> {
  return rowById(postId, () => readablePost(em, { postId, userId: actorId(actor) }), `No post with id ${postId}.`);
}

/** GET /posts/{id}: the post, if the actor may read it, else 404. */
export async function getPost(em: EntityManager, actor: Actor, postId: string): Promise<PostDto> {
  return presentPost(await readPost(em, actor, postId));
}

/** 404 unless the actor may read the post (comments and reactions start here). */
export async function assertCanReadPost(em: EntityManager, actor: Actor, postId: string): Promise<void> {
  await rowById(postId, () => postIsReadable(em, { postId, userId: actorId(actor) }), `No post with id ${postId}.`);
}

/** The author only: editing and deleting. A post the actor may not read is a 404 first. */
async function assertCanEditPost(em: EntityManager, actor: Actor, postId: string): Promise<PostFields> {
  const post = await readPost(em, actor, postId);
  if (post.author.id !== actor.userId)
    throw forbidden(`Only the author (${post.author.username}) may change post ${postId}.`).because('not-author');
  return post;
}

/** A post shows only images its author uploaded. */
async function checkMedia(em: EntityManager, actor: Actor, ids: string[] | undefined): Promise<string[]> {
  if (!ids?.length) return [];
  const own = await ownMediaIds(em, actor.userId, ids);
  const unknown = ids.filter((id) => !own.has(id));
  if (unknown.length)
    throw unprocessable(
      `No image you uploaded has the id ${unknown.join(', ')}; upload it first (POST /media).`,
    ).because('unknown-media');
  await markAttached(em, ids);
  return ids;
}

export async function createPost(em: EntityManager, actor: Actor, input: PostCreate): Promise<PostDto> {
  const kind = input.kind ?? 'post';
  let project = null;
  if (kind === 'build_log') {
    if (!input.projectId)
      throw badRequest('A build log needs a projectId.', [
        { path: '/body/projectId', message: 'required when kind is build_log' },
      ]);
    try {
      project = await assertCanContributeToProject(em, actor, input.projectId);
    } catch (err) {
      // The project is referenced from the body, not the URL: an invisible one is unprocessable, not "not found".
      if (err instanceof ProblemError && err.status === 404)
        throw unprocessable(`There is no project with id ${input.projectId}.`).because('unknown-project');
      throw err;
    }
  } else {
    const misplaced = BUILD_LOG_ONLY.filter((field) => input[field] !== undefined);
    if (misplaced.length)
      throw badRequest(
        `Only a build log belongs to a project and reports on it: send kind build_log, or leave ${misplaced.join(', ')} out.`,
        misplaced.map((field) => ({ path: `/body/${field}`, message: 'only allowed when kind is build_log' })),
      );
  }
  // Stored as PostgreSQL writes a uuid (lowercase): the roadmap's text matches on them (a milestone's delete).
  const milestoneIds = (input.milestoneIds ?? []).map((id) => id.toLowerCase());
  if (new Set(milestoneIds).size !== milestoneIds.length)
    throw badRequest('milestoneIds names a milestone twice: name each once.', [
      { path: '/body/milestoneIds', message: 'must not have duplicate items' },
    ]);
  const mediaIds = await checkMedia(em, actor, input.mediaIds);
  // A build log's event, its project's pulse and its milestones' counts are written in the same
  // transaction as the build log; the project's row is locked first (`holdPulse`), so a milestone
  // named cannot be deleted between its check and the insert.
  return em.transactional(async (tem) => {
    if (project) {
      await holdPulse(tem, project.id);
      await assertMilestonesOf(tem, project.id, milestoneIds);
    }
    const post = tem.create(Post, {
      author: tem.getReference(User, actor.userId),
      kind,
      title: input.title.trim(),
      body: input.body,
      tags: normaliseTags(input.tags),
      mediaIds,
      project,
      health: input.health ?? null,
      milestoneIds,
      links: input.links ?? [],
    });
    await tem.flush();
    await tem.populate(post, ['author']);
    const presented = presentPost(post);
    if (project) {
      const healthChange = await noteBuildLog(tem, project.id, {
        id: post.id,
        at: post.createdAt,
        health: post.health ?? null,
      });
      await recountEvidence(tem, milestoneIds);
      await recordBuildLogEvent(tem, 'build_log.created', presented, healthChange);
    }
    return presented;
  });
}

/** The fields only a build log takes: a plain post has no project to report on. */
const BUILD_LOG_ONLY = ['projectId', 'health', 'milestoneIds', 'links'] as const;

export async function updatePost(em: EntityManager, actor: Actor, postId: string, input: PostUpdate): Promise<PostDto> {
  await assertCanEditPost(em, actor, postId);
  const mediaIds = input.mediaIds === undefined ? undefined : await checkMedia(em, actor, input.mediaIds);
  return em.transactional(async (tem) => {
    const post = await tem.findOne(Post, { id: postId }, { populate: ['author'] });
    if (!post) throw notFound(`No post with id ${postId}.`); // deleted since the check
    const before = post.updatedAt;
    if (input.title !== undefined) post.title = input.title.trim();
    if (input.body !== undefined) post.body = input.body;
    if (input.tags !== undefined) post.tags = normaliseTags(input.tags);
    if (mediaIds !== undefined) post.mediaIds = mediaIds;
    // The update first: its row lock orders the event's sequence after any earlier change's.
    await tem.flush();
    const presented = presentPost(post);
    if (post.updatedAt !== before) await recordBuildLogEvent(tem, 'build_log.updated', presented);
    return presented;
  });
}

export async function deletePost(em: EntityManager, actor: Actor, postId: string): Promise<Removed> {
  const { title } = await assertCanEditPost(em, actor, postId);
  await em.transactional(async (tem) => {
    const post = await tem.findOne(Post, { id: postId }, { populate: ['author'] });
    if (post?.project && post.kind === 'build_log') await holdPulse(tem, post.project.id);
    // Comments cascade. No event when another request deleted it meanwhile: its own tells it.
    if (post && (await tem.nativeDelete(Post, { id: postId }))) {
      const healthChange = await afterBuildLogChange(tem, post);
      await recordBuildLogEvent(tem, 'build_log.deleted', presentPost(post), healthChange);
    }
  });
  return { name: title };
}

/**
 * After a build log was deleted, hidden or shown again: its project's pulse and its milestones'
 * counts, read again from the build logs (nothing for a plain post). The caller holds the
 * project's row lock (`holdPulse`) from before it changed the post.
 */
export async function afterBuildLogChange(
  tem: EntityManager,
  post: Pick<Post, 'kind' | 'milestoneIds'> & { project?: { id: string } | null },
): Promise<HealthChange | null> {
  if (post.kind !== 'build_log' || !post.project) return null;
  const healthChange = await refreshPulse(tem, post.project.id);
  await recountEvidence(tem, post.milestoneIds);
  return healthChange;
}

/** `author` is a username or `me`; `authorId` a user already looked up (GET /users/{username}/posts). */
export type PostListQuery = {
  author?: string;
  authorId?: string;
  tag?: string;
  kind?: Post['kind'];
  projectId?: string;
  limit: number;
  cursor?: string;
};

/** A list item as `view` asks: the post whole (the default), or summed up with an excerpt. */
export type ListedPost<V extends PostView | undefined = PostView | undefined> = V extends 'summary'
  ? PostSummary
  : PostDto;

/** What a list reads of each body (all of it, or an excerpt's worth), and how it presents each row. */
function asViewed<V extends PostView | undefined>(view: V) {
  return (
    view === 'summary'
      ? { bodyChars: EXCERPT_SOURCE, present: presentPostSummary }
      : { bodyChars: undefined, present: presentPost }
  ) as { bodyChars: number | undefined; present: (row: PostFields) => ListedPost<V> };
}

export async function listPosts<V extends PostView | undefined>(
  em: EntityManager,
  actor: Actor,
  query: PostListQuery & { view?: V },
): Promise<Page<ListedPost<V>>> {
  const filters = {
    authorId: query.author === 'me' ? actor.userId : query.authorId,
    authorName: query.author === undefined || query.author === 'me' ? undefined : query.author.toLowerCase(),
    tag: query.tag?.toLowerCase(),
    kind: query.kind,
    projectId: query.projectId,
  };
  const list = cursorList('posts', filters.authorId, filters.authorName, filters.tag, filters.kind, filters.projectId);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const { bodyChars, present } = asViewed(query.view as V);
  const rows = await readablePosts(em, {
    userId: actorId(actor),
    ...filters,
    before: after?.id,
    bodyChars,
    limit: query.limit + 1,
  });
  return pageOf(rows, query.limit, present, idOf, list);
}

/** A project's build logs, newest first. Hidden ones are shown only to their author. */
/** Build logs posted at or after `since` (every one without it). */
const EPOCH = new Date(0);

/** The list a build-log cursor belongs to: the project, since, and the ids chosen (in any order). */
export const buildLogList = (projectId: string, query: { since?: Date; ids?: readonly string[] }): CursorList =>
  cursorList('build-logs', projectId, query.since?.toISOString(), query.ids ? [...query.ids].sort() : undefined);

export async function listBuildLogs<V extends PostView | undefined>(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  query: { limit: number; cursor?: string; since?: Date; ids?: readonly string[]; view?: V },
  seen?: SeenAccess,
): Promise<Page<ListedPost<V>>> {
  const { project, role } = await assertCanReadProject(em, actor, projectId);
  seen?.({ owner: project.owner, role });
  const after = decodeCursor(query.cursor, isIdCursor, buildLogList(projectId, query));
  const page = {
    projectId,
    userId: actorId(actor),
    before: after?.id ?? LAST_ID,
    since: query.since ?? EPOCH,
    limit: query.limit + 1,
  };
  const { bodyChars, present } = asViewed(query.view as V);
  const rows = query.ids?.length
    ? await buildLogPageAmong(em, { ...page, bodyChars, ids: query.ids })
    : bodyChars === undefined
      ? await buildLogPage(em, page)
      : await buildLogSummaryPage(em, { ...page, bodyChars });
  return pageOf(rows, query.limit, present, idOf, buildLogList(projectId, query));
}
