/**
 * Reactions' typed statements (src/db/reads.ts). Adding is an insert that does nothing on
 * conflict, and the post's total moves only when a row was really inserted or deleted, in the
 * same transaction: the count stays exact under concurrent and repeated requests.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { hotRead, reads } from '../db/reads.js';
import type { ReactionKind } from './reaction.entity.js';

/** Each kind's count on the post, and whether `userId` gave it. */
export const reactionCounts = hotRead(['postId', 'userId'], (db, v: { postId: string; userId: string | null }) =>
  db
    .selectFrom('Reaction as r')
    .select((eb) => [
      'r.kind as kind',
      eb.fn.countAll<number>().as('n'),
      eb.fn<boolean>('bool_or', [eb('r.user', '=', v.userId)]).as('mine'),
    ])
    .where('r.post', '=', v.postId)
    .groupBy('r.kind')
    .orderBy('r.kind'),
);

async function countReactions(tem: EntityManager, postId: string, by: 1 | -1): Promise<void> {
  await reads(tem)
    .updateTable('Post')
    .set((eb) => ({ reactionCount: eb('reactionCount', '+', by) }))
    .where('id', '=', postId)
    .execute();
}

/** Inside a transaction: adds the reaction unless it is there; whether it was added. */
export async function insertReaction(tem: EntityManager, postId: string, userId: string, kind: ReactionKind) {
  const inserted = await reads(tem)
    .insertInto('Reaction')
    .values({ id: uuidv7(), post: postId, user: userId, kind, createdAt: new Date() })
    .onConflict((oc) => oc.doNothing())
    .returning('id as id')
    .execute();
  if (inserted.length > 0) await countReactions(tem, postId, 1);
  return inserted.length > 0;
}

/** Inside a transaction: takes the reaction back if it is there; whether it was. */
export async function deleteReaction(tem: EntityManager, postId: string, userId: string, kind: ReactionKind) {
  const deleted = await reads(tem)
    .deleteFrom('Reaction')
    .where('post', '=', postId)
    .where('user', '=', userId)
    .where('kind', '=', kind)
    .returning('id as id')
    .execute();
  if (deleted.length > 0) await countReactions(tem, postId, -1);
  return deleted.length > 0;
}
