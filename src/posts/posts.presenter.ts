import { presentableLine } from '../kernel/text.js';
import type { Post as PostDto, PostSummary } from '../../codegen/generated/api/types.gen.js';
import type { Post } from './post.entity.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';
import { EXCERPT_SOURCE, keptExcerpt } from './excerpt.js';

/** What the presenter reads: a Post entity, or a row of a typed read (its timestamps as text). */
export type PostFields = Pick<
  Post,
  | 'id'
  | 'kind'
  | 'title'
  | 'body'
  | 'tags'
  | 'mediaIds'
  | 'health'
  | 'milestoneIds'
  | 'links'
  | 'commentCount'
  | 'reactionCount'
> & {
  author: Pick<User, 'id' | 'username' | 'displayName'>;
  hiddenAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
} & ({ project?: { id: string } | null } | { projectId: string | null });

export function presentPost(post: PostFields): PostDto {
  const projectId = 'projectId' in post ? post.projectId : (post.project?.id ?? null);
  return {
    id: post.id,
    kind: post.kind,
    title: presentableLine(post.title, 'Untitled'),
    body: post.body,
    tags: post.tags,
    mediaIds: post.mediaIds,
    author: presentUserSummary(post.author),
    projectId,
    // A build log whose project was deleted is a plain post: it reports on no project any more.
    health: projectId ? (post.health ?? null) : null,
    milestoneIds: projectId ? post.milestoneIds : [],
    links: post.links,
    commentCount: post.commentCount,
    reactionCount: post.reactionCount,
    hidden: post.hiddenAt != null,
    createdAt: isoString(post.createdAt),
    updatedAt: isoString(post.updatedAt),
  };
}

/**
 * A post summed up (`view=summary`): every field but the body, and its excerpt. The row holds the
 * start of the body only (EXCERPT_SOURCE characters); one that long may have been cut.
 */
export function presentPostSummary(post: PostFields): PostSummary {
  const { body, ...rest } = presentPost(post);
  return { ...rest, excerpt: keptExcerpt(`${rest.id} ${rest.updatedAt}`, body, body.length >= EXCERPT_SOURCE) };
}
