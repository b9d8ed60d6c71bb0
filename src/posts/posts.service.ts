/**
 * Posts. A build log is a post of kind build_log attached to a project: written with
 * content.write by the project's owner or a member, listed with projects.read.
 * Who may read a post: anyone, unless it is hidden (its author only) or on a private project
 * (its owner and members only). To everyone else it does not exist (404).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PostCreate, PostUpdate, Post as PostDto } from '../../codegen/generated/api/types.gen.js';
import { Post } from './post.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor } from '../http/actor.js';
import { badRequest, forbidden, notFound, ProblemError, unprocessable } from '../http/problem.js';
import { decodeCursor, isIdCursor, pageOf, type Page } from '../http/cursor.js';
import {
  actorId,
  assertCanContributeToProject,
  projectListCursor,
  readableSql,
  readProjectRows,
} from '../projects/projects.service.js';
import { presentPost, type PostFields } from './posts.presenter.js';
import { isoTimestamp, preparedRows } from '../db/hot-read.js';
import { normaliseTags } from './tags.js';
import { ownMediaIds } from '../media/media.service.js';
import { isUuid } from '../http/ids.js';

/**
 * "Posts this actor may read", in SQL: not hidden unless the caller wrote it, and on no project
 * or on one the caller may read. A statement using it starts with `MEMBER_CTE` and selects from
 * `posts po left join projects pr on pr.id = po.project_id`; its first parameters are
 * `readableParams` (the CTE's, then READABLE_POST's: the caller's id each time). Each post's
 * project is joined by its key: an EXISTS here was planned as a hash of every readable project,
 * built on each request.
 */
const MEMBER_CTE = 'with member as (select project_id from project_members where user_id = ?)';
const READABLE_POST = `(po.hidden_at is null or po.author_id = ?) and (po.project_id is null or ${readableSql('pr', 'pr.id in (select project_id from member)')})`;
const readableParams = (actor: Actor): unknown[] => {
  const me = actorId(actor);
  return [me, me, me];
};
/**
 * "The image `mediaColumn` is shown by a post this actor may read", for a statement that starts
 * with `MEMBER_CTE`; its parameters (after the CTE's): `readableParams(actor).slice(1)`.
 */
export const shownByReadablePostSql = (mediaColumn: string): string =>
  `exists (select 1 from posts po left join projects pr on pr.id = po.project_id where po.media_ids @> array[${mediaColumn}::text] and ${READABLE_POST})`;
export { MEMBER_CTE, readableParams };

/** A select from the posts the caller may read (`po`, its project `pr`); parameters of `joins` come between the CTE's and READABLE_POST's. */
const readablePostsSql = (select: string, joins: string, where: string[]): string =>
  `${MEMBER_CTE} select ${select} from posts po left join projects pr on pr.id = po.project_id ${joins} where ${[READABLE_POST, ...where].join(' and ')}`;

/**
 * The one row of `select` (from the readable posts `po` and `joins`) whose `idColumn` is `id`,
 * or undefined: one prepared statement. A post, a comment under it, or the read check alone.
 */
export async function readablePostRow<R>(
  em: EntityManager,
  actor: Actor,
  select: string,
  joins: string,
  idColumn: string,
  id: string,
): Promise<R | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await preparedRows<R>(em, readablePostsSql(select, joins, [`${idColumn} = ?`]), [
    ...readableParams(actor),
    id,
  ]);
  return row;
}

/** The post as the API shows it, if the actor may read it, else 404. */
export async function readPost(em: EntityManager, actor: Actor, postId: string): Promise<PostFields> {
  const row = await readablePostRow<PostRow>(
    em,
    actor,
    POST_ROW,
    'join users u on u.id = po.author_id',
    'po.id',
    postId,
  );
  if (!row) throw notFound(`No post with id ${postId}.`);
  return fromPostRow(row);
}

/** 404 unless the actor may read the post (reactions start here). */
export async function assertCanReadPost(em: EntityManager, actor: Actor, postId: string): Promise<void> {
  if (!(await readablePostRow(em, actor, 'po.id', '', 'po.id', postId))) throw notFound(`No post with id ${postId}.`);
}

/**
 * The read check of a post and a read of rows under it in one round trip, as `readProjectRows`
 * does for a project (the comments): `rowsSql` selects from the post `po` (it may use `po.id`)
 * with a non-null `id` column, and is run only for a post the caller may read. 404 otherwise.
 */
export async function readPostRows<R extends { id: string }>(
  em: EntityManager,
  actor: Actor,
  postId: string,
  rowsSql: string,
  params: unknown[],
): Promise<R[]> {
  const me = actorId(actor);
  const rows = !isUuid(postId)
    ? []
    : await preparedRows<R>(
        em,
        readablePostsSql('r.*', `left join lateral (${rowsSql}) r on true`, ['po.id = ?']),
        [me, ...params, me, me, postId], // in the order of their placeholders: the CTE's, the rows', READABLE_POST's
      );
  if (!rows.length) throw notFound(`No post with id ${postId}.`);
  return (rows[0]!.id as string | null) === null ? [] : rows; // the left join's one empty row: no rows
}

/** The author only: editing and deleting. A post the actor may not read is a 404 first. */
async function assertCanEditPost(em: EntityManager, actor: Actor, postId: string): Promise<PostFields> {
  const post = await readPost(em, actor, postId);
  if (post.author.id !== actor.userId)
    throw forbidden(`Only the author (${post.author.username}) may change post ${postId}.`);
  return post;
}

/** A post shows only images its author uploaded. */
async function checkMedia(em: EntityManager, actor: Actor, ids: string[] | undefined): Promise<string[]> {
  if (!ids?.length) return [];
  const own = await ownMediaIds(em, actor.userId, ids);
  const unknown = ids.filter((id) => !own.has(id));
  if (unknown.length)
    throw unprocessable(`No image you uploaded has the id ${unknown.join(', ')}; upload it first (POST /media).`);
  return ids;
}

export async function createPost(em: EntityManager, actor: Actor, input: PostCreate): Promise<Post> {
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
        throw unprocessable(`There is no project with id ${input.projectId}.`);
      throw err;
    }
  } else if (input.projectId !== undefined) {
    throw badRequest('Only a build log belongs to a project: send kind build_log, or leave projectId out.', [
      { path: '/body/projectId', message: 'only allowed when kind is build_log' },
    ]);
  }
  const post = em.create(Post, {
    author: em.getReference(User, actor.userId),
    kind,
    title: input.title.trim(),
    body: input.body,
    tags: normaliseTags(input.tags),
    mediaIds: await checkMedia(em, actor, input.mediaIds),
    project,
  });
  await em.flush();
  await em.populate(post, ['author']);
  return post;
}

export async function updatePost(em: EntityManager, actor: Actor, postId: string, input: PostUpdate): Promise<Post> {
  await assertCanEditPost(em, actor, postId);
  const post = await em.findOne(Post, { id: postId }, { populate: ['author'] });
  if (!post) throw notFound(`No post with id ${postId}.`); // deleted since the check
  if (input.title !== undefined) post.title = input.title.trim();
  if (input.body !== undefined) post.body = input.body;
  if (input.tags !== undefined) post.tags = normaliseTags(input.tags);
  if (input.mediaIds !== undefined) post.mediaIds = await checkMedia(em, actor, input.mediaIds);
  await em.flush();
  return post;
}

export async function deletePost(em: EntityManager, actor: Actor, postId: string): Promise<void> {
  await assertCanEditPost(em, actor, postId);
  await em.nativeDelete(Post, { id: postId }); // comments cascade
}

/** A post as the lists read it (the columns `presentPost` shows, the author's with it; timestamps as the API writes them). */
const POST_ROW = `po.id, po.kind, po.title, po.body, po.tags, po.media_ids, po.comment_count, po.reaction_count, po.project_id,
  ${isoTimestamp('po.hidden_at')} as hidden_at, ${isoTimestamp('po.created_at')} as created_at, ${isoTimestamp('po.updated_at')} as updated_at,
  u.id as author_id, u.username as author_username, u.display_name as author_display_name`;
type PostRow = {
  id: string;
  kind: PostFields['kind'];
  title: string;
  body: string;
  tags: string[];
  media_ids: string[];
  comment_count: number;
  reaction_count: number;
  project_id: string | null;
  hidden_at: string | null;
  created_at: string;
  updated_at: string;
  author_id: string;
  author_username: string;
  author_display_name: string;
};
const fromPostRow = (r: PostRow): PostFields => ({
  id: r.id,
  kind: r.kind,
  title: r.title,
  body: r.body,
  tags: r.tags,
  mediaIds: r.media_ids,
  commentCount: r.comment_count,
  reactionCount: r.reaction_count,
  author: { id: r.author_id, username: r.author_username, displayName: r.author_display_name },
  project: r.project_id === null ? null : { id: r.project_id },
  hiddenAt: r.hidden_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

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

export async function listPosts(em: EntityManager, actor: Actor, query: PostListQuery): Promise<Page<PostDto>> {
  const after = decodeCursor(query.cursor, isIdCursor);
  const me = actorId(actor);
  // The feed, the most read list: rows with their authors in one prepared statement, newest
  // first from the primary key.
  const where: string[] = [];
  const params: unknown[] = readableParams(actor);
  const filter = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (query.author === 'me') filter('po.author_id = ?', me);
  else if (query.author !== undefined) filter('u.username = ?', query.author.toLowerCase());
  if (query.authorId !== undefined) filter('po.author_id = ?', query.authorId);
  if (query.tag !== undefined) filter('po.tags @> array[?]::text[]', query.tag.toLowerCase());
  if (query.kind !== undefined) filter('po.kind = ?', query.kind);
  if (query.projectId !== undefined) filter('po.project_id = ?', query.projectId);
  if (after) filter('po.id < ?', after.id);
  const rows = await preparedRows<PostRow>(
    em,
    `${readablePostsSql(POST_ROW, 'join users u on u.id = po.author_id', where)} order by po.id desc limit ?`,
    [...params, query.limit + 1],
  );
  return pageOf(rows.map(fromPostRow), query.limit, presentPost, (p) => ({ id: p.id }));
}

/** A project's build logs, newest first. Hidden ones are shown only to their author. */
export async function listBuildLogs(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<PostDto>> {
  const after = await projectListCursor(em, actor, projectId, query.cursor, isIdCursor);
  // What list_build_logs (MCP) and the REST list read: rows with their authors, in the same
  // round trip as the read check, as the roadmap does (the ORM's find with its author populated
  // cost ~7 ms of CPU per page of 20 on the bench machine, against ~1 ms for a roadmap page).
  const rows = await readProjectRows<PostRow>(
    em,
    actor,
    projectId,
    `select ${POST_ROW} from posts po join users u on u.id = po.author_id
     where po.project_id = p.id and po.kind = 'build_log' and (po.hidden_at is null or po.author_id = ?)${after ? ' and po.id < ?' : ''}
     order by po.id desc limit ?`,
    [actorId(actor), ...(after ? [after.id] : []), query.limit + 1],
  );
  return pageOf(rows.map(fromPostRow), query.limit, presentPost, (p) => ({ id: p.id }));
}
