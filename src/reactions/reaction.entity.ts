import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { User } from '../users/user.entity.js';
import { Post } from '../posts/post.entity.js';

const REACTION_KINDS = ['like', 'heart', 'celebrate', 'rocket', 'eyes', 'laugh'] as const;
export type ReactionKind = (typeof REACTION_KINDS)[number];

const ReactionSchema = defineEntity({
  name: 'Reaction',
  tableName: 'reactions',
  properties: {
    id: uuidv7Key(),
    post: () => p.manyToOne(Post).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    kind: p.enum(REACTION_KINDS),
    createdAt: madeAt(),
  },
  // One reaction of each kind per person and post: the unique key makes adding idempotent.
  uniques: [{ name: 'reactions_post_user_kind_unique', properties: ['post', 'user', 'kind'] }],
  indexes: [{ name: 'reactions_user_idx', properties: ['user'] }],
});
export class Reaction extends ReactionSchema.class {}
ReactionSchema.setClass(Reaction);
