/**
 * Who may read an image, written once (src/db/reads.ts): it follows the content that shows it.
 * Its uploader always; anyone when it is a profile picture, or when some post that shows it is
 * one they may read (`postReadable`). An image no readable post shows does not exist for anyone
 * else: one not attached yet, one shown only by posts they may not read (a build log of a private
 * project, a hidden post), and one whose last post is gone. Private stays private.
 */
import { type ExpressionBuilder, sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type DB, hotRead, reads } from '../db/reads.js';
import { postReadable } from '../posts/posts.queries.js';

/** Any query that has an image aliased `md`. */
type WithMedia = ExpressionBuilder<DB & { md: DB['Media'] }, 'md'>;

/** The read rule for image `md`. */
const mediaReadable = (eb: WithMedia, userId: string | null) => {
  const shownBy = sql<string[]>`array[${eb.ref('md.id')}::text]`;
  return eb.or([
    eb('md.uploader', '=', userId),
    eb.exists(eb.selectFrom('User as a').select('a.id as id').whereRef('a.avatarMediaId', '=', 'md.id')),
    eb.exists(
      eb
        .selectFrom('Post as po')
        .select('po.id as id')
        .where('po.mediaIds', '@>', shownBy)
        .where((pe) => postReadable(pe, userId)),
    ),
  ]);
};

/** Whether `userId` may read the image. */
export const mediaIsReadable = hotRead(['mediaId', 'userId'], (db, v: { mediaId: string; userId: string | null }) =>
  db
    .selectFrom('Media as md')
    .select('md.id as id')
    .where('md.id', '=', v.mediaId)
    .where((eb) => mediaReadable(eb, v.userId)),
);

/** The bytes of every image an account keeps (its storage quota is checked against it). */
export async function storedBytes(em: EntityManager, userId: string): Promise<number> {
  const row = await reads(em)
    .selectFrom('Media as md')
    .select((eb) => eb.fn.sum<string | null>('md.byteSize').as('used'))
    .where('md.uploader', '=', userId)
    .executeTakeFirst();
  return Number(row?.used ?? 0);
}

/**
 * Holds, until this transaction ends, the advisory lock on one image's bytes: an upload storing
 * them and the sweep removing them never interleave (src/media/media.service.ts).
 */
export async function lockBytes(em: EntityManager, sha256: string): Promise<void> {
  await reads(em)
    .selectNoFrom((eb) =>
      eb.fn('pg_advisory_xact_lock', [eb.fn('hashtextextended', [eb.val(`media:${sha256}`), eb.lit(0)])]).as('locked'),
    )
    .execute();
}
