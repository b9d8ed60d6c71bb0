/**
 * Comments' typed reads, and the counter changes their writes make (src/db/reads.ts). Counters
 * (a post's commentCount, a comment's replyCount) move only by increments in SQL, inside the
 * transaction of the row they count, so they stay exact under concurrent writers.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Kysely } from 'kysely';
import { type DB, hotRead, iso, reads, changeTimesOf } from '../db/reads.js';
import { userSummary } from '../users/users.queries.js';
import { postReadable } from '../access/access.queries.js';

/** The comments (`c`) with their authors (`u`), in the columns the API shows (`presentComment`). */
const commentsWithAuthors = (db: Kysely<DB>) =>
  db
    .selectFrom('Comment as c')
    .innerJoin('User as u', 'u.id', 'c.author')
    .select((eb) => [
      'c.id as id',
      'c.post as postId',
      'c.parent as parentId',
      'c.depth as depth',
      'c.body as body',
      'c.replyCount as replyCount',
      iso('c.deletedAt').as('deletedAt'),
      iso('c.hiddenAt').as('hiddenAt'),
      ...changeTimesOf('c'),
      userSummary(eb).as('author'),
    ]);

/** A page of a post's comments after `after` (the first page: the nil UUID), oldest first. */
export const commentPage = hotRead(
  ['postId', 'after', 'limit'],
  (db, v: { postId: string; after: string; limit: number }) =>
    commentsWithAuthors(db)
      .where('c.post', '=', v.postId)
      .where('c.id', '>', v.after)
      .orderBy('c.id', 'asc')
      .limit(v.limit),
);

/** One comment, if `userId` may read the post it is under. */
export const readableComment = hotRead(['commentId', 'userId'], (db, v: { commentId: string; userId: string | null }) =>
  commentsWithAuthors(db)
    .innerJoin('Post as po', 'po.id', 'c.post')
    .where('c.id', '=', v.commentId)
    .where((eb) => postReadable(eb, v.userId)),
);

/** Inside a transaction: a comment of the post, locked against a concurrent delete. */
export const lockComment = (tem: EntityManager, commentId: string) =>
  reads(tem)
    .selectFrom('Comment as c')
    .select((eb) => [
      'c.post as postId',
      'c.parent as parentId',
      'c.depth as depth',
      'c.replyCount as replyCount',
      eb('c.deletedAt', 'is not', null).as('deleted'),
    ])
    .where('c.id', '=', commentId)
    .forUpdate()
    .executeTakeFirst();

/** Adds `by` to the post's comment count. */
export async function countComments(tem: EntityManager, postId: string, by: 1 | -1): Promise<void> {
  await reads(tem)
    .updateTable('Post')
    .set((eb) => ({ commentCount: eb('commentCount', '+', by) }))
    .where('id', '=', postId)
    .execute();
}

/** Adds `by` to the comment's reply count; the comment as it is after. */
export const countReplies = (tem: EntityManager, commentId: string, by: 1 | -1) =>
  reads(tem)
    .updateTable('Comment')
    .set((eb) => ({ replyCount: eb('replyCount', '+', by) }))
    .where('id', '=', commentId)
    .returning((eb) => [
      'replyCount as replyCount',
      'parent as parentId',
      eb('deletedAt', 'is not', null).as('deleted'),
    ])
    .executeTakeFirst();

/** Leaves a placeholder where the comment was: no body, the time it was deleted. */
export async function leavePlaceholder(tem: EntityManager, commentId: string): Promise<void> {
  const now = new Date();
  await reads(tem)
    .updateTable('Comment')
    .set({ body: null, deletedAt: now, updatedAt: now })
    .where('id', '=', commentId)
    .execute();
}

export async function removeComment(tem: EntityManager, commentId: string): Promise<void> {
  await reads(tem).deleteFrom('Comment').where('id', '=', commentId).execute();
}
