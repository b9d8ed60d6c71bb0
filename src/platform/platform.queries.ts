/**
 * The platform's figures (src/db/reads.ts), counted over what everyone may read: the read rules
 * (`postReadable`, `projectReadable`) for a caller who is nobody.
 */
import type { Kysely } from 'kysely';
import { type DB, hotRead } from '../db/reads.js';
import { postReadable, projectReadable } from '../access/access.queries.js';

const NOBODY = null;

const publicProjects = (db: Kysely<DB>) => db.selectFrom('Project as p').where((eb) => projectReadable(eb, NOBODY));
const publicPosts = (db: Kysely<DB>) => db.selectFrom('Post as po').where((eb) => postReadable(eb, NOBODY));

/** Tags of readable posts and of public projects, the `top` most used first (ties by name). */
export const tagCounts = hotRead(['top'], (db, v: { top: number }) =>
  db
    .selectFrom(
      publicPosts(db)
        .select((eb) => eb.fn<string>('unnest', ['po.tags']).as('term'))
        .unionAll(publicProjects(db).select((eb) => eb.fn<string>('unnest', ['p.tags']).as('term')))
        .as('t'),
    )
    .select((eb) => ['t.term as name', eb.cast<number>(eb.fn.countAll(), 'integer').as('count')])
    .groupBy('t.term')
    .orderBy('count', 'desc')
    .orderBy('t.term', 'asc')
    .limit(v.top),
);

/** Skills people list and public projects look for. */
export const skillCounts = hotRead(['top'], (db, v: { top: number }) =>
  db
    .selectFrom(
      db
        .selectFrom('User as u')
        .select((eb) => eb.fn<string>('unnest', ['u.skills']).as('term'))
        .unionAll(publicProjects(db).select((eb) => eb.fn<string>('unnest', ['p.wantedSkills']).as('term')))
        .as('t'),
    )
    .select((eb) => ['t.term as name', eb.cast<number>(eb.fn.countAll(), 'integer').as('count')])
    .groupBy('t.term')
    .orderBy('count', 'desc')
    .orderBy('t.term', 'asc')
    .limit(v.top),
);

/** How many there are of each thing everyone may read. */
export const platformCounts = hotRead([], (db) =>
  db.selectNoFrom((eb) => {
    return [
      eb
        .cast<number>(
          db.selectFrom('User as u').select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('users'),
      eb
        .cast<number>(
          publicProjects(db).select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('projects'),
      eb
        .cast<number>(
          db
            .selectFrom('Milestone as m')
            .innerJoin('Project as p', 'p.id', 'm.project')
            .where((e) => projectReadable(e, NOBODY))
            .select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('milestones'),
      eb
        .cast<number>(
          publicPosts(db).select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('posts'),
      eb
        .cast<number>(
          publicPosts(db)
            .where('po.kind', '=', 'build_log')
            .select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('buildLogs'),
      eb
        .cast<number>(
          db
            .selectFrom('Comment as c')
            .innerJoin('Post as po', 'po.id', 'c.post')
            .where((e) => postReadable(e, NOBODY))
            .where('c.deletedAt', 'is', null)
            .where('c.hiddenAt', 'is', null)
            .select((e) => e.fn.countAll().as('n')),
          'integer',
        )
        .as('comments'),
    ];
  }),
);
