import type { ExpressionBuilder } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type DB, filteredRead, hotRead, iso, reads, changeTimesOf } from '../db/reads.js';
import { isMember, projectReadable } from '../access/access.queries.js';
import { userSummary } from '../users/users.queries.js';
import { DEFAULT_PAGE_ROWS } from '../kernel/contract.js';
import type { ProjectHealthInput as Health } from '../../codegen/generated/api/types.gen.js';

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
    'p.health as health',
    iso('p.healthSetAt').as('healthSetAt'),
    'p.healthPostId as healthPostId',
    iso('p.lastBuildLogAt').as('lastBuildLogAt'),
    ...changeTimesOf('p'),
    userSummary(eb).as('owner'),
  ] as const;

/**
 * A project as the API shows it, whether the caller may read it and whether they are one of its
 * members: every project sub-resource (roadmap, build logs, members, MCP tools) starts here, but
 * for get_roadmap's first page, whose status statement checks the same rule (roadmapStatusRead).
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

/** The projects the caller may read, newest first; only one owner's (`ownerId`), a member's (`memberId`), or of one health, when given. */
export const readableProjects = filteredRead(
  ['userId', 'ownerId', 'memberId', 'health', 'before', 'limit'],
  (
    db,
    q: { userId: string | null; ownerId?: string; memberId?: string; health?: Health; before?: string; limit: number },
  ) => {
    let query = db
      .selectFrom('Project as p')
      .innerJoin('User as u', 'u.id', 'p.owner')
      .select(projectColumns)
      .where((eb) => projectReadable(eb, q.userId));
    const { ownerId, memberId, health, before } = q;
    if (ownerId !== undefined) query = query.where('p.owner', '=', ownerId);
    if (health !== undefined) query = query.where('p.health', '=', health);
    if (memberId !== undefined) query = query.where((eb) => isMember(eb, memberId));
    if (before !== undefined) query = query.where('p.id', '<', before);
    return query.orderBy('p.id', 'desc').limit(q.limit);
  },
  { written: { limit: DEFAULT_PAGE_ROWS } },
);

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

/**
 * Inside a project's deletion, its row lock held: a public project's build logs outlive it as
 * plain posts, since their authors wrote them and anyone could read them. A private project's go
 * with it: as plain posts they would be public, and nobody outside the project ever read them
 * (their comments and reactions cascade). A typed write over the posts table, so that projects/
 * need not import posts/.
 */
export async function releaseBuildLogs(tem: EntityManager, projectId: string): Promise<void> {
  const db = reads(tem);
  await db
    .deleteFrom('Post')
    .where('project', '=', projectId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('Project as p')
          .select('p.id as id')
          .where('p.id', '=', projectId)
          .where('p.visibility', '=', 'private'),
      ),
    )
    .execute();
  await db.updateTable('Post').set({ project: null, kind: 'post' }).where('project', '=', projectId).execute();
}

/**
 * Inside a transaction: takes the project's row lock, which every change to the project or its
 * roadmap takes first; false when the project is gone.
 */
export async function lockProject(tem: EntityManager, projectId: string): Promise<boolean> {
  // Outside one, the lock would end with the statement.
  if (!tem.isInTransaction()) throw new Error('lockProject runs in a transaction');
  return (await projectRowLock(tem, { projectId })).length > 0;
}
const projectRowLock = hotRead(['projectId'], (db, v: { projectId: string }) =>
  db.selectFrom('Project').select('id as id').where('id', '=', v.projectId).forUpdate(),
);

/**
 * The project's row lock for the rest of the transaction, taken only when `userId` owns it (a
 * row that does not match is not locked, so a stranger never waits on, or holds up, the owner's
 * writes); true when taken.
 */
export async function lockOwnedProject(tem: EntityManager, projectId: string, userId: string): Promise<boolean> {
  if (!tem.isInTransaction()) throw new Error('lockOwnedProject runs in a transaction');
  return (await ownedProjectRowLock(tem, { projectId, userId })).length > 0;
}
const ownedProjectRowLock = hotRead(['projectId', 'userId'], (db, v: { projectId: string; userId: string }) =>
  db.selectFrom('Project').select('id as id').where('id', '=', v.projectId).where('owner', '=', v.userId).forUpdate(),
);

/** The users among `userIds` who are members of the project (its owner is not a member). */
export async function memberIdsAmong(
  em: EntityManager,
  projectId: string,
  userIds: readonly string[],
): Promise<string[]> {
  const rows = await reads(em)
    .selectFrom('ProjectMember')
    .select('user as user')
    .where('project', '=', projectId)
    .where('user', 'in', [...userIds])
    .execute();
  return rows.map((r) => r.user);
}

/**
 * The project's pulse as it is, its row locked until the transaction ends (build-log writes queue
 * here, behind the roadmap's writers). FOR NO KEY UPDATE: a build log's insert holds a key-share
 * lock on its project already (its foreign key), which FOR UPDATE would wait on in another
 * writer that holds one too: a deadlock.
 */
export function lockedPulse(tem: EntityManager, projectId: string) {
  return reads(tem)
    .selectFrom('Project')
    .select(['health', 'healthSetAt', 'lastBuildLogAt'])
    .where('id', '=', projectId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/** The newest visible build log of a project, and the newest that reported a health. */
export async function newestBuildLogs(tem: EntityManager, projectId: string) {
  const visible = reads(tem)
    .selectFrom('Post')
    .where('project', '=', projectId)
    .where('kind', '=', 'build_log')
    .where('hiddenAt', 'is', null);
  const [newest, reported] = await Promise.all([
    visible.select((eb) => eb.fn.max('createdAt').as('at')).executeTakeFirst(),
    visible
      .select(['id', 'health', 'createdAt'])
      .where('health', 'is not', null)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  return { newestAt: newest?.at ?? null, reported: reported ?? null };
}

/** Writes the project's pulse; the project's own `updatedAt` stays (a build log is not an edit of the project). */
export function setPulse(
  tem: EntityManager,
  projectId: string,
  pulse: {
    health: Health | null;
    healthSetAt: Date | null;
    /** Left out (undefined): unchanged. */
    healthPostId?: string | null;
    lastBuildLogAt: Date | null;
  },
) {
  return reads(tem).updateTable('Project').set(pulse).where('id', '=', projectId).execute();
}
