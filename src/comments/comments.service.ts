/**
 * Threaded comments. Counters change only by increments in SQL (comments.queries.ts). A comment with replies is never removed: deleting it leaves a
 * placeholder, and the placeholder goes once its last reply is gone.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommentCreate, Comment as CommentDto } from '../../codegen/generated/api/types.gen.js';
import { Comment, MAX_COMMENT_DEPTH } from './comment.entity.js';
import { Post } from '../posts/post.entity.js';
import { User } from '../users/user.entity.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { conflict, forbidden, notFound, unprocessable } from '../kernel/problem.js';
import { cursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { assertCanReadPost } from '../posts/posts.service.js';
import { FIRST_ID, rowById } from '../db/reads.js';
import { presentComment, type CommentFields } from './comments.presenter.js';
import {
  commentPage,
  countComments,
  countReplies,
  leavePlaceholder,
  lockComment,
  readableComment,
  removeComment,
} from './comments.queries.js';

/** A post's comments, oldest first. */
export async function listComments(
  em: EntityManager,
  actor: Actor,
  postId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<CommentDto>> {
  await assertCanReadPost(em, actor, postId);
  const list = cursorList('comments', postId);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const rows = await commentPage(em, { postId, after: after?.id ?? FIRST_ID, limit: query.limit + 1 });
  return pageOf(rows, query.limit, (c) => presentComment(c, actor.userId), idOf, list);
}

/** The comment if its post is readable by the actor, else 404. */
export async function readComment(em: EntityManager, actor: Actor, commentId: string): Promise<CommentFields> {
  return rowById(
    commentId,
    () => readableComment(em, { commentId, userId: actorId(actor) }),
    `No comment with id ${commentId}.`,
  );
}

/** GET /comments/{id}: the comment, if the actor may read it, else 404. */
export async function getComment(em: EntityManager, actor: Actor, commentId: string): Promise<CommentDto> {
  return presentComment(await readComment(em, actor, commentId), actor.userId);
}

/** The author only; a deleted comment is no longer anyone's to change. */
async function assertCanEditComment(em: EntityManager, actor: Actor, commentId: string): Promise<CommentFields> {
  const comment = await readComment(em, actor, commentId);
  if (comment.author.id !== actor.userId)
    throw forbidden(`Only the author of comment ${commentId} may change it.`).because('not-author');
  return comment;
}

export async function createComment(
  em: EntityManager,
  actor: Actor,
  postId: string,
  input: CommentCreate,
): Promise<CommentDto> {
  await assertCanReadPost(em, actor, postId);
  const id = await em.transactional(async (tem) => {
    let depth = 0;
    if (input.parentId) {
      // Lock the parent: a concurrent delete must not remove it under the new reply.
      const parent = await lockComment(tem, input.parentId);
      if (parent?.postId !== postId)
        throw unprocessable(`Post ${postId} has no comment with id ${input.parentId} to reply to.`).because(
          'unknown-parent-comment',
        );
      if (parent.deleted)
        throw unprocessable('That comment was deleted; reply to another one.').because('parent-comment-deleted');
      depth = parent.depth + 1;
      if (depth >= MAX_COMMENT_DEPTH)
        throw unprocessable(
          `Threads are at most ${MAX_COMMENT_DEPTH} levels deep; reply higher up the thread.`,
        ).because('thread-too-deep');
      await countReplies(tem, input.parentId, 1);
    }
    const comment = tem.create(Comment, {
      post: tem.getReference(Post, postId),
      author: tem.getReference(User, actor.userId),
      parent: input.parentId ? tem.getReference(Comment, input.parentId) : null,
      depth,
      body: input.body,
    });
    await tem.flush();
    await countComments(tem, postId, 1);
    return comment.id;
  });
  return getComment(em, actor, id);
}

export async function updateComment(
  em: EntityManager,
  actor: Actor,
  commentId: string,
  body: string,
): Promise<CommentDto> {
  const found = await assertCanEditComment(em, actor, commentId);
  if (found.deletedAt) throw conflict('This comment was deleted; it cannot be edited.').because('comment-deleted');
  const comment = await em.findOne(Comment, { id: commentId }, { populate: ['author'] });
  if (!comment) throw notFound(`No comment with id ${commentId}.`); // deleted since the check
  comment.body = body;
  await em.flush();
  return presentComment(comment, actor.userId);
}

export async function deleteComment(em: EntityManager, actor: Actor, commentId: string): Promise<void> {
  const found = await assertCanEditComment(em, actor, commentId);
  if (found.deletedAt) return; // already a placeholder: nothing more to delete
  await em.transactional(async (tem) => {
    const row = await lockComment(tem, commentId);
    if (!row || row.deleted) return; // a concurrent delete got there first
    await countComments(tem, row.postId, -1);
    if (row.replyCount > 0) {
      await leavePlaceholder(tem, commentId);
      return;
    }
    // No replies: remove it, then any placeholder ancestors left with no replies.
    let id: string | null = commentId;
    let parentId = row.parentId;
    while (id) {
      await removeComment(tem, id);
      if (!parentId) break;
      const parent = await countReplies(tem, parentId, -1);
      if (!parent?.deleted || parent.replyCount > 0) break;
      id = parentId;
      parentId = parent.parentId;
    }
  });
}
