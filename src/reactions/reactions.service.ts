/** Reactions: who may react is who may read the post; the counting is in reactions.queries.ts. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Reactions } from '../../codegen/generated/api/types.gen.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { notFound } from '../kernel/problem.js';
import { assertCanReadPost } from '../posts/posts.service.js';
import type { ReactionKind } from './reaction.entity.js';
import { deleteReaction, insertReaction, reactionCounts } from './reactions.queries.js';

export async function getReactions(em: EntityManager, actor: Actor, postId: string): Promise<Reactions> {
  await assertCanReadPost(em, actor, postId);
  return summary(em, actor, postId);
}

async function summary(em: EntityManager, actor: Actor, postId: string): Promise<Reactions> {
  const rows = await reactionCounts(em, { postId, userId: actorId(actor) });
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.kind] = Number(r.n);
  return {
    postId,
    total: rows.reduce((sum, r) => sum + Number(r.n), 0),
    counts,
    mine: rows.filter((r) => r.mine).map((r) => r.kind),
  };
}

/** Returns whether the reaction is new. */
export async function addReaction(
  em: EntityManager,
  actor: Actor,
  postId: string,
  kind: ReactionKind,
): Promise<{ created: boolean; reactions: Reactions }> {
  await assertCanReadPost(em, actor, postId);
  const created = await em.transactional((tem) => insertReaction(tem, postId, actor.userId, kind));
  return { created, reactions: await summary(em, actor, postId) };
}

export async function removeReaction(
  em: EntityManager,
  actor: Actor,
  postId: string,
  kind: ReactionKind,
): Promise<void> {
  await assertCanReadPost(em, actor, postId);
  const removed = await em.transactional((tem) => deleteReaction(tem, postId, actor.userId, kind));
  if (!removed) throw notFound(`You have no '${kind}' reaction on post ${postId}.`);
}
