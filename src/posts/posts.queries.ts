import { type Kysely, sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type DB, filteredRead, hotRead, iso, read, reads, changeTimesOf } from '../db/reads.js';
import { postReadable } from '../access/access.queries.js';
import { userSummary } from '../users/users.queries.js';
import { DEFAULT_PAGE_ROWS } from '../kernel/contract.js';

/**
 * The posts (`po`) with their authors (`u`), in the columns the API shows (`presentPost`). With
 * `bodyChars`, only the start of each body is read, as much as a summary's excerpt needs: a list
 * of summaries does not carry up to 100,000 characters a post from the database.
 */
const postsWithAuthors = (db: Kysely<DB>, bodyChars?: number) =>
  db
    .selectFrom('Post as po')
    .innerJoin('User as u', 'u.id', 'po.author')
    .select((eb) => [
      'po.id as id',
      'po.kind as kind',
      'po.title as title',
      bodyChars === undefined ? 'po.body as body' : sql<string>`left(po.body, ${bodyChars})`.as('body'),
      'po.tags as tags',
      'po.mediaIds as mediaIds',
      'po.commentCount as commentCount',
      'po.reactionCount as reactionCount',
      'po.project as projectId',
      'po.health as health',
      'po.milestoneIds as milestoneIds',
      'po.links as links',
      iso('po.hiddenAt').as('hiddenAt'),
      ...changeTimesOf('po'),
      userSummary(eb).as('author'),
    ]);

/** One post, if `userId` may read it. */
export const readablePost = hotRead(['postId', 'userId'], (db, v: { postId: string; userId: string | null }) =>
  postsWithAuthors(db)
    .where('po.id', '=', v.postId)
    .where((eb) => postReadable(eb, v.userId)),
);

/** Whether `userId` may read the post (the check in front of what hangs on it: comments, reactions). */
export const postIsReadable = hotRead(['postId', 'userId'], (db, v: { postId: string; userId: string | null }) =>
  db
    .selectFrom('Post as po')
    .select('po.id as id')
    .where('po.id', '=', v.postId)
    .where((eb) => postReadable(eb, v.userId)),
);

export type PostFilters = {
  userId: string | null;
  authorId?: string | undefined;
  authorName?: string | undefined;
  tag?: string | undefined;
  kind?: 'post' | 'build_log' | undefined;
  projectId?: string | undefined;
  before?: string | undefined;
  /** Given, each body is read only this far (a summary's excerpt). */
  bodyChars?: number | undefined;
  limit: number;
};

/** The posts `userId` may read, newest first, narrowed by the filters given. */
export const readablePosts = filteredRead(
  ['userId', 'authorId', 'authorName', 'tag', 'kind', 'projectId', 'before', 'bodyChars', 'limit'],
  (db, f: PostFilters) => {
    let query = postsWithAuthors(db, f.bodyChars).where((eb) => postReadable(eb, f.userId));
    const { authorId, authorName, tag, kind, projectId, before } = f;
    if (authorId !== undefined) query = query.where('po.author', '=', authorId);
    if (authorName !== undefined) query = query.where('u.username', '=', authorName);
    // The one tag as a one-element array, built in SQL so that the tag itself is the parameter.
    if (tag !== undefined) query = query.where((eb) => eb('po.tags', '@>', sql<string[]>`array[${tag}]::text[]`));
    if (kind !== undefined) query = query.where('po.kind', '=', kind);
    if (projectId !== undefined) query = query.where('po.project', '=', projectId);
    if (before !== undefined) query = query.where('po.id', '<', before);
    return query.orderBy('po.id', 'desc').limit(f.limit);
  },
  { written: { limit: DEFAULT_PAGE_ROWS } },
);

type BuildLogQuery = {
  projectId: string;
  userId: string | null;
  before: string;
  since: Date;
  limit: number;
  bodyChars?: number;
};
const buildLogs = (db: Kysely<DB>, v: BuildLogQuery) =>
  postsWithAuthors(db, v.bodyChars)
    .where('po.project', '=', v.projectId)
    .where('po.kind', '=', 'build_log')
    .where((eb) => postReadable(eb, v.userId))
    .where('po.id', '<', v.before)
    .where('po.createdAt', '>=', v.since)
    .orderBy('po.id', 'desc')
    .limit(v.limit);

/** A project's build logs before `before` (for the first page, `LAST_ID`), newest first, as `userId` may read them. */
export const buildLogPage = hotRead(['projectId', 'userId', 'before', 'since', 'limit'], buildLogs);
/** The same page with only the start of each body (`bodyChars` of it). */
export const buildLogSummaryPage = hotRead(
  ['projectId', 'userId', 'before', 'since', 'limit', 'bodyChars'],
  (db, v: BuildLogQuery & { bodyChars: number }) => buildLogs(db, v),
);

/** The same page with only the build logs among `ids`. */
export function buildLogPageAmong(em: EntityManager, v: BuildLogQuery & { ids: readonly string[] }) {
  return read(em, buildLogs(reads(em), v).where('po.id', 'in', [...v.ids]));
}
