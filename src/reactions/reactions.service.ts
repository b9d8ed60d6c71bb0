/**
 * Reactions. Adding is `insert … on conflict do nothing`, and the post's total moves only when
 * a row was really inserted or deleted, in the same transaction: the count stays exact under
 * concurrent and repeated requests.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Reactions } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../http/actor.js';
import { notFound } from '../http/problem.js';
import { assertCanReadPost } from '../posts/posts.service.js';
import type { ReactionKind } from './reaction.entity.js';
import { uuidv7 } from 'uuidv7';

export async function getReactions(em: EntityManager, actor: Actor, postId: string): Promise<Reactions> {
  await assertCanReadPost(em, actor, postId);
  return summary(em, actor, postId);
}

async function summary(em: EntityManager, actor: Actor, postId: string): Promise<Reactions> {
  const rows = await em.execute<{ kind: ReactionKind; n: number; mine: boolean }[]>(
    `select kind, count(*)::int as n, bool_or(user_id = ?) as mine from reactions where post_id = ? group by kind order by kind`,
    [actor.userId, postId],
  );
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
  const created = await em.transactional(async (tem) => {
    const inserted = await tem.execute(
      `insert into reactions (id, post_id, user_id, kind, created_at) values (?, ?, ?, ?, now()) on conflict do nothing returning id`,
      [uuidv7(), postId, actor.userId, kind],
    );
    if (inserted.length === 0) return false;
    await tem.execute('update posts set reaction_count = reaction_count + 1 where id = ?', [postId]);
    return true;
  });
  return { created, reactions: await summary(em, actor, postId) };
}

export async function removeReaction(
  em: EntityManager,
  actor: Actor,
  postId: string,
  kind: ReactionKind,
): Promise<void> {
  await assertCanReadPost(em, actor, postId);
  const removed = await em.transactional(async (tem) => {
    const deleted = await tem.execute(
      'delete from reactions where post_id = ? and user_id = ? and kind = ? returning id',
      [postId, actor.userId, kind],
    );
    if (deleted.length === 0) return false;
    await tem.execute('update posts set reaction_count = reaction_count - 1 where id = ?', [postId]);
    return true;
  });
  if (!removed) throw notFound(`You have no '${kind}' reaction on post ${postId}.`);
}
