import { resourceGoneTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes } from '../db/columns.js';
import { User } from '../users/user.entity.js';
import { Post } from '../posts/post.entity.js';

/** Threads are at most this many levels deep (depth 0 .. MAX_COMMENT_DEPTH - 1). */
export const MAX_COMMENT_DEPTH = 5;

const CommentSchema = defineEntity({
  name: 'Comment',
  tableName: 'comments',
  properties: {
    id: uuidv7Key(),
    post: () => p.manyToOne(Post).deleteRule('cascade'),
    author: () => p.manyToOne(User).deleteRule('cascade'),
    /** A parent is never removed while it has replies (it becomes a placeholder instead). */
    parent: () => p.manyToOne(Comment).nullable().deleteRule('cascade'),
    depth: p.integer().default(0),
    /** Null once deleted (the placeholder keeps the thread readable). */
    body: p.text().nullable(),
    replyCount: p.integer().default(0),
    deletedAt: p.datetime().nullable(),
    hiddenAt: p.datetime().nullable(),
    ...changeTimes(),
  },
  indexes: [
    { name: 'comments_post_idx', properties: ['post', 'id'] },
    { name: 'comments_parent_idx', properties: ['parent'] },
    { name: 'comments_author_idx', properties: ['author'] },
  ],
  triggers: [resourceGoneTrigger('comments')],
});
export class Comment extends CommentSchema.class {}
CommentSchema.setClass(Comment);
