import type { Post as PostDto } from '../../codegen/generated/api/types.gen.js';
import type { Post } from './post.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';

export function presentPost(post: Post): PostDto {
  return {
    id: post.id,
    kind: post.kind,
    title: post.title,
    body: post.body,
    tags: post.tags,
    mediaIds: post.mediaIds,
    author: presentUserSummary(post.author),
    projectId: post.project?.id ?? null,
    commentCount: post.commentCount,
    reactionCount: post.reactionCount,
    hidden: post.hiddenAt != null,
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
  };
}
