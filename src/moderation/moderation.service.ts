/**
 * Moderation: hide and unhide a post or comment. Only a signed-in administrator, through the web
 * application (a session), never an API key: keys carry no account roles (product rule 2).
 * A hidden post or comment stays visible to its author only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Post } from '../posts/post.entity.js';
import { Comment } from '../comments/comment.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor } from '../kernel/actor.js';
import { forbidden, notFound } from '../kernel/problem.js';
import { isUuid } from '../kernel/ids.js';
import { presentPost } from '../posts/posts.presenter.js';
import { afterBuildLogChange } from '../posts/posts.service.js';
import { holdPulse } from '../projects/pulse.js';
import { presentComment } from '../comments/comments.presenter.js';
import type { Comment as CommentDto, Post as PostDto } from '../../codegen/generated/api/types.gen.js';

async function assertAdministrator(em: EntityManager, actor: Actor): Promise<User> {
  if (actor.via !== 'session')
    throw forbidden(
      'Moderation is for signed-in administrators in the web application only; API keys are refused.',
    ).because('administrators-only');
  const admin = await em.findOne(User, { id: actor.userId });
  if (!admin?.isAdmin)
    throw forbidden('Only administrators may hide or unhide posts and comments.').because('administrators-only');
  return admin;
}

export async function setPostHidden(
  em: EntityManager,
  actor: Actor,
  postId: string,
  hidden: boolean,
): Promise<PostDto> {
  await assertAdministrator(em, actor);
  // A hidden build log no longer speaks for its project: the project's health and its
  // milestones' counts are read again from the build logs still shown.
  return em.transactional(async (tem) => {
    const post = isUuid(postId) ? await tem.findOne(Post, { id: postId }, { populate: ['author'] }) : null;
    if (!post) throw notFound(`No post with id ${postId}.`);
    if (hidden === (post.hiddenAt != null)) return presentPost(post);
    if (post.project && post.kind === 'build_log') await holdPulse(tem, post.project.id);
    post.hiddenAt = hidden ? new Date() : null;
    await tem.flush();
    await afterBuildLogChange(tem, post);
    return presentPost(post);
  });
}

export async function setCommentHidden(
  em: EntityManager,
  actor: Actor,
  commentId: string,
  hidden: boolean,
): Promise<CommentDto> {
  await assertAdministrator(em, actor);
  const comment = isUuid(commentId) ? await em.findOne(Comment, { id: commentId }, { populate: ['author'] }) : null;
  if (!comment) throw notFound(`No comment with id ${commentId}.`);
  comment.hiddenAt = hidden ? (comment.hiddenAt ?? new Date()) : null;
  await em.flush();
  return presentComment(comment, actor.userId);
}
