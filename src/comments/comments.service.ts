/**
 * Threaded comments. Counters (a post's commentCount, a comment's replyCount) change only by
 * atomic SQL increments inside the same transaction as the row they count, so they stay exact
 * under concurrent writers. A comment with replies is never removed: deleting it leaves a
 * placeholder, and the placeholder goes once its last reply is gone.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommentCreate, Comment as CommentDto } from '../../codegen/generated/api/types.gen.js';
import { Comment, MAX_COMMENT_DEPTH } from './comment.entity.js';
import { Post } from '../posts/post.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor } from '../http/actor.js';
import { conflict, forbidden, notFound, unprocessable } from '../http/problem.js';
import { decodeCursor, isIdCursor, pageOf, type Page } from '../http/cursor.js';
import { assertCanReadPost } from '../posts/posts.service.js';
import { presentComment } from './comments.presenter.js';

export async function listComments(
  em: EntityManager, actor: Actor, postId: string, query: { limit: number; cursor?: string },
): Promise<Page<CommentDto>> {
  await assertCanReadPost(em, actor, postId);
  const after = decodeCursor(query.cursor, isIdCursor);
  const rows = await em.find(
    Comment,
    { post: postId, ...(after ? { id: { $gt: after.id } } : {}) },
    { orderBy: { id: 'asc' }, limit: query.limit + 1, populate: ['author'] },
  );
  return pageOf(rows, query.limit, (c) => presentComment(c, actor.userId), (c) => ({ id: c.id }));
}

/** The comment if its post is readable by the actor, else 404. */
export async function assertCanReadComment(em: EntityManager, actor: Actor, commentId: string): Promise<Comment> {
  const comment = await em.findOne(Comment, { id: commentId }, { populate: ['author'] });
  if (!comment) throw notFound(`No comment with id ${commentId}.`);
  try {
    await assertCanReadPost(em, actor, comment.post.id);
  } catch {
    throw notFound(`No comment with id ${commentId}.`);
  }
  return comment;
}

/** The author only; a deleted comment is no longer anyone's to change. */
async function assertCanEditComment(em: EntityManager, actor: Actor, commentId: string): Promise<Comment> {
  const comment = await assertCanReadComment(em, actor, commentId);
  if (comment.author.id !== actor.userId) throw forbidden(`Only the author of comment ${commentId} may change it.`);
  return comment;
}

export async function createComment(em: EntityManager, actor: Actor, postId: string, input: CommentCreate): Promise<Comment> {
  await assertCanReadPost(em, actor, postId);
  const id = await em.transactional(async (tem) => {
    let depth = 0;
    if (input.parentId) {
      // Lock the parent: a concurrent delete must not remove it under the new reply.
      const [parent] = await tem.execute<{ depth: number; deleted: boolean }[]>(
        'select depth, deleted_at is not null as deleted from comments where id = ? and post_id = ? for update',
        [input.parentId, postId],
      );
      if (!parent) throw unprocessable(`Post ${postId} has no comment with id ${input.parentId} to reply to.`);
      if (parent.deleted) throw unprocessable('That comment was deleted; reply to another one.');
      depth = parent.depth + 1;
      if (depth >= MAX_COMMENT_DEPTH) throw unprocessable(`Threads are at most ${MAX_COMMENT_DEPTH} levels deep; reply higher up the thread.`);
      await tem.execute('update comments set reply_count = reply_count + 1 where id = ?', [input.parentId]);
    }
    const comment = tem.create(Comment, {
      post: tem.getReference(Post, postId),
      author: tem.getReference(User, actor.userId),
      parent: input.parentId ? tem.getReference(Comment, input.parentId) : null,
      depth,
      body: input.body,
    });
    await tem.flush();
    await tem.execute('update posts set comment_count = comment_count + 1 where id = ?', [postId]);
    return comment.id;
  });
  return em.findOneOrFail(Comment, { id }, { populate: ['author'], refresh: true });
}

export async function updateComment(em: EntityManager, actor: Actor, commentId: string, body: string): Promise<Comment> {
  const comment = await assertCanEditComment(em, actor, commentId);
  if (comment.deletedAt) throw conflict('This comment was deleted; it cannot be edited.');
  comment.body = body;
  await em.flush();
  return comment;
}

export async function deleteComment(em: EntityManager, actor: Actor, commentId: string): Promise<void> {
  const found = await assertCanEditComment(em, actor, commentId);
  if (found.deletedAt) return; // already a placeholder: nothing more to delete
  await em.transactional(async (tem) => {
    const [row] = await tem.execute<{ post_id: string; reply_count: number; parent_id: string | null; deleted: boolean }[]>(
      'select post_id, reply_count, parent_id, deleted_at is not null as deleted from comments where id = ? for update',
      [commentId],
    );
    if (!row || row.deleted) return; // a concurrent delete got there first
    await tem.execute('update posts set comment_count = comment_count - 1 where id = ?', [row.post_id]);
    if (row.reply_count > 0) {
      await tem.execute('update comments set body = null, deleted_at = now(), updated_at = now() where id = ?', [commentId]);
      return;
    }
    // No replies: remove it, then any placeholder ancestors left with no replies.
    let id: string | null = commentId;
    let parentId = row.parent_id;
    while (id) {
      await tem.execute('delete from comments where id = ?', [id]);
      if (!parentId) break;
      const [parent] = await tem.execute<{ reply_count: number; parent_id: string | null; deleted: boolean }[]>(
        'update comments set reply_count = reply_count - 1 where id = ? returning reply_count, parent_id, deleted_at is not null as deleted',
        [parentId],
      );
      if (!parent || !parent.deleted || parent.reply_count > 0) break;
      id = parentId;
      parentId = parent.parent_id;
    }
  });
}
