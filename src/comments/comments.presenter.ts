import type { Comment as CommentDto } from '../../codegen/generated/api/types.gen.js';
import type { Comment } from './comment.entity.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';

/** What the presenter reads: a Comment entity, or a row of a typed read (its timestamps as text). */
export type CommentFields = Pick<Comment, 'id' | 'depth' | 'replyCount'> & {
  body?: string | null;
  author: Pick<User, 'id' | 'username' | 'displayName'>;
  deletedAt?: Timestamp | null;
  hiddenAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
} & ({ post: { id: string }; parent?: { id: string } | null } | { postId: string; parentId: string | null });

/** A deleted comment shows no body and no author; a hidden one shows its body to its author only. */
export function presentComment(c: CommentFields, viewerId: string): CommentDto {
  const deleted = c.deletedAt != null;
  const hidden = c.hiddenAt != null;
  const showBody = !deleted && (!hidden || c.author.id === viewerId);
  return {
    id: c.id,
    postId: 'postId' in c ? c.postId : c.post.id,
    parentId: 'postId' in c ? c.parentId : (c.parent?.id ?? null),
    depth: c.depth,
    body: showBody ? (c.body ?? null) : null,
    author: deleted ? null : presentUserSummary(c.author),
    deleted,
    hidden,
    replyCount: c.replyCount,
    createdAt: isoString(c.createdAt),
    updatedAt: isoString(c.updatedAt),
  };
}
