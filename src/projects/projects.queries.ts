/**
 * Projects' typed reads (src/db/reads.ts), and the rule every read of a project or of what hangs
 * on one goes by: a project is readable when it is public, or the caller owns it or is one of its
 * members. `projectReadable` is that rule, written once: the single project's 404, the project
 * lists, search and the posts of projects all use it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type ExpressionBuilder, sql } from 'kysely';
import { jsonBuildObject } from 'kysely/helpers/postgres';
import { type DB, hotRead, iso, read, reads } from '../db/reads.js';

/** Any query that has a project aliased `p`. */
type WithProject = ExpressionBuilder<DB & { p: DB['Project'] }, 'p'>;

/** Whether `userId` is a member of project `p`. */
export const isMember = (eb: WithProject, userId: string | null) =>
  eb.exists(
    eb
      .selectFrom('ProjectMember as m')
      .select(sql.lit(1).as('one'))
      .whereRef('m.project', '=', 'p.id')
      .where('m.user', '=', userId),
  );

/** The read rule: project `p` is public, owned by `userId`, or `userId` is one of its members. */
export const projectReadable = (eb: WithProject, userId: string | null) =>
  eb.or([eb('p.visibility', '=', 'public'), eb('p.owner', '=', userId), isMember(eb, userId)]);

/** A user `u` as the API shows one beside what they made (`UserSummary`). */
export const userSummary = (eb: ExpressionBuilder<DB & { u: DB['User'] }, 'u'>) =>
  jsonBuildObject({ id: eb.ref('u.id'), username: eb.ref('u.username'), displayName: eb.ref('u.displayName') });

/** The columns the API shows of a project `p` and its owner `u`, as `presentProject` takes them. */
const projectColumns = (eb: ExpressionBuilder<DB & { p: DB['Project']; u: DB['User'] }, 'p' | 'u'>) =>
  [
    'p.id as id',
    'p.name as name',
    'p.slug as slug',
    'p.tagline as tagline',
    'p.description as description',
    'p.stage as stage',
    'p.visibility as visibility',
    'p.tags as tags',
    'p.links as links',
    'p.lookingForCollaborators as lookingForCollaborators',
    'p.wantedSkills as wantedSkills',
    iso('p.createdAt').as('createdAt'),
    iso('p.updatedAt').as('updatedAt'),
    userSummary(eb).as('owner'),
  ] as const;

/**
 * A project as the API shows it, whether the caller may read it and whether they are one of its
 * members: every project sub-resource (roadmap, build logs, members, MCP tools) starts here.
 */
export const projectWithAccess = hotRead(
  ['projectId', 'userId'],
  (db, v: { projectId: string; userId: string | null }) =>
    db
      .selectFrom('Project as p')
      .innerJoin('User as u', 'u.id', 'p.owner')
      .select((eb) => [
        ...projectColumns(eb),
        projectReadable(eb, v.userId).as('readable'),
        isMember(eb, v.userId).as('isMember'),
      ])
      .where('p.id', '=', v.projectId),
);

/** The projects the caller may read, newest first; only one owner's when `ownerId` is given. */
export function readableProjects(
  em: EntityManager,
  q: { userId: string | null; ownerId?: string; before?: string; limit: number },
) {
  let query = reads(em)
    .selectFrom('Project as p')
    .innerJoin('User as u', 'u.id', 'p.owner')
    .select(projectColumns)
    .where((eb) => projectReadable(eb, q.userId));
  if (q.ownerId) query = query.where('p.owner', '=', q.ownerId);
  if (q.before) query = query.where('p.id', '<', q.before);
  return read(em, query.orderBy('p.id', 'desc').limit(q.limit));
}

/** A page of a project's members after `after` (the first page: the nil UUID), in the order they joined. */
export const memberPage = hotRead(
  ['projectId', 'after', 'limit'],
  (db, v: { projectId: string; after: string; limit: number }) =>
    db
      .selectFrom('ProjectMember as m')
      .innerJoin('User as u', 'u.id', 'm.user')
      .select((eb) => ['m.id as id', iso('m.addedAt').as('addedAt'), userSummary(eb).as('user')])
      .where('m.project', '=', v.projectId)
      .where('m.id', '>', v.after)
      .orderBy('m.id', 'asc')
      .limit(v.limit),
);
