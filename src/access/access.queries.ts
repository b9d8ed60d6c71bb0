/**
 * The read rules: who may read a project, a post and an image, each written once as an expression
 * over the typed reads (src/db/reads.ts). The 404s, the lists, search, the platform's counts, the
 * radar and the images all use these, so that a thing one may not open is never counted, found or
 * shown. They live below every area that reads through them (projects, posts, media, comments,
 * search, platform, radar), so that none of those has to import another for its rule.
 */
import { type ExpressionBuilder, sql } from 'kysely';
import type { DB } from '../db/reads.js';

/** Any query that has a project aliased `p`. */
type WithProject = ExpressionBuilder<DB & { p: DB['Project'] }, 'p'>;
/** Any query that has a post aliased `po`. */
type WithPost = ExpressionBuilder<DB & { po: DB['Post'] }, 'po'>;

/** Whether `userId` is a member of project `p`. */
export const isMember = (eb: WithProject, userId: string | null) =>
  eb.exists(
    eb
      .selectFrom('ProjectMember as m')
      .select(sql.lit(1).as('one'))
      .whereRef('m.project', '=', 'p.id')
      .where('m.user', '=', userId),
  );

/*
 * For nobody (`userId` null: the feeds, the platform's counts) each rule is written without its
 * owner's and member's terms, which could only be NULL there. Bound as NULL parameters, they made
 * PostgreSQL plan a prepared feed statement again on every execution: its plan for the values
 * (those terms folded away) always looked cheaper than the plan kept for any value, and planning
 * the feed's union took several times what running it does.
 */

/** The read rule: project `p` is public, owned by `userId`, or `userId` is one of its members. */
export const projectReadable = (eb: WithProject, userId: string | null) =>
  userId === null
    ? eb('p.visibility', '=', 'public')
    : eb.or([eb('p.visibility', '=', 'public'), eb('p.owner', '=', userId), isMember(eb, userId)]);

/** The read rule: post `po` is not hidden unless `userId` wrote it, and is on no project or on one `userId` may read. */
export const postReadable = (eb: WithPost, userId: string | null) =>
  eb.and([
    userId === null
      ? eb('po.hiddenAt', 'is', null)
      : eb.or([eb('po.hiddenAt', 'is', null), eb('po.author', '=', userId)]),
    eb.or([
      eb('po.project', 'is', null),
      eb.exists(
        eb
          .selectFrom('Project as p')
          .select('p.id as id')
          .whereRef('p.id', '=', 'po.project')
          .where((pe) => projectReadable(pe, userId)),
      ),
    ]),
  ]);

/** Any query that has an image aliased `md`. */
type WithMedia = ExpressionBuilder<DB & { md: DB['Media'] }, 'md'>;

/**
 * The read rule for image `md`: its uploader always; anyone when it is a profile picture, or when
 * some post that shows it is one they may read. (media.queries.ts says why.)
 */
export const mediaReadable = (eb: WithMedia, userId: string | null) => {
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
