/**
 * Who may read an image, written once (`mediaReadable`, src/access/access.queries.ts): it follows the content that shows it.
 * Its uploader always; anyone when it is a profile picture, or when some post that shows it is
 * one they may read (`postReadable`). An image no readable post shows does not exist for anyone
 * else: one not attached yet, one shown only by posts they may not read (a build log of a private
 * project, a hidden post), and one whose last post is gone. Private stays private.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { hotRead, reads } from '../db/reads.js';
import { mediaReadable } from '../access/access.queries.js';

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
