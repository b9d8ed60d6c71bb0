import type { Comment as CommentDto } from '../../codegen/generated/api/types.gen.js';
import type { Comment } from './comment.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';

/** A deleted comment shows no body and no author; a hidden one shows its body to its author only. */
export function presentComment(c: Comment, viewerId: string): CommentDto {
  const deleted = c.deletedAt != null;
  const hidden = c.hiddenAt != null;
  const showBody = !deleted && (!hidden || c.author.id === viewerId);
  return {
    id: c.id,
    postId: c.post.id,
    parentId: c.parent?.id ?? null,
    depth: c.depth,
    body: showBody ? (c.body ?? null) : null,
    author: deleted ? null : presentUserSummary(c.author),
    deleted,
    hidden,
    replyCount: c.replyCount,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
