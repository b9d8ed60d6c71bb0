/** The roadmap's typed reads and the statements its writes run under the project's row lock (src/db/reads.ts). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { hotRead, iso, read, reads, changeTimesOf } from '../db/reads.js';
import type { MilestoneStatus } from '../../codegen/generated/api/types.gen.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/reads.js';
import { utcDay } from '../kernel/days.js';
import { isMember, projectReadable } from '../access/access.queries.js';

/** The milestones as the API shows them (`presentMilestone`). */
const milestones = (db: Kysely<DB>) =>
  db
    .selectFrom('Milestone as m')
    .select([
      'm.id as id',
      'm.project as projectId',
      'm.title as title',
      'm.description as description',
      'm.status as status',
      day('m.startDate').as('startDate'),
      day('m.dueDate').as('dueDate'),
      day('m.originalDueDate').as('originalDueDate'),
      'm.dueDateMoves as dueDateMoves',
      'm.earlierDueDates as earlierDueDates',
      iso('m.dueDateMovedAt').as('dueDateMovedAt'),
      'm.dueDateReason as dueDateReason',
      'm.buildLogCount as buildLogCount',
      iso('m.lastBuildLogAt').as('lastBuildLogAt'),
      iso('m.completedAt').as('completedAt'),
      'm.position as position',
      ...changeTimesOf('m'),
    ]);

/** A date column as the API writes a day (YYYY-MM-DD), or null. */
function day(column: string) {
  return sql<string | null>`to_char(${sql.ref(column)}, 'YYYY-MM-DD')`;
}

/**
 * Overdue on `today` (YYYY-MM-DD, UTC), as the API says it: the due day is over and the milestone
 * is neither done nor cancelled (`isOverdue` in ./milestones.presenter.ts says the same of a row
 * read). The day is the service's, as the presenter's is: one clock decides both.
 */
const overdueOn = (alias: 'm' | 's', today: string) =>
  sql<boolean>`(${sql.ref(`${alias}.dueDate`)} < ${today}::date and ${sql.ref(`${alias}.status`)} in ('planned', 'in_progress'))`;

/** A page of a project's roadmap: the milestones after `after` (a position), in order. */
export const roadmapPage = hotRead(
  ['projectId', 'after', 'limit'],
  (db, v: { projectId: string; after: number; limit: number }) =>
    milestones(db)
      .where('m.project', '=', v.projectId)
      .where('m.position', '>', v.after)
      .orderBy('m.position')
      .limit(v.limit),
);

/** What chooses a roadmap list's milestones besides its project: statuses, ids, overdue or not (all optional). */
export type RoadmapFilters = { statuses?: readonly MilestoneStatus[]; ids?: readonly string[]; overdue?: boolean };

const filtered = (em: EntityManager, projectId: string, f: RoadmapFilters) => {
  let query = milestones(reads(em)).where('m.project', '=', projectId);
  if (f.statuses?.length) query = query.where('m.status', 'in', [...f.statuses]);
  if (f.ids?.length) query = query.where('m.id', 'in', [...f.ids]);
  if (f.overdue !== undefined) {
    const overdue = overdueOn('m', utcDay());
    query = query.where(f.overdue ? overdue : sql<boolean>`not coalesce(${overdue}, false)`);
  }
  return query;
};

/** A page of a project's roadmap with only the milestones in one of `statuses`, or among `ids`. */
export function roadmapPageFiltered(
  em: EntityManager,
  v: { projectId: string; after: number; limit: number } & RoadmapFilters,
) {
  return read(em, filtered(em, v.projectId, v).where('m.position', '>', v.after).orderBy('m.position').limit(v.limit));
}

/** The first `limit` milestones of the filtered roadmap, in order, leaving out those in `served`. */
export function roadmapUnserved(
  em: EntityManager,
  v: { projectId: string; limit: number; served: readonly string[] } & RoadmapFilters,
) {
  return read(
    em,
    filtered(em, v.projectId, v)
      .where((eb) => eb.not(eb('m.id', '=', eb.fn.any(eb.val([...v.served])))))
      .orderBy('m.position')
      .limit(v.limit),
  );
}

/** The milestones among `ids` that the filtered roadmap still holds (any order). */
export async function roadmapAmong(
  em: EntityManager,
  v: { projectId: string; among: readonly string[] } & RoadmapFilters,
) {
  return v.among.length ? read(em, filtered(em, v.projectId, v).where('m.id', 'in', [...v.among])) : [];
}

/** One milestone of a project. */
export const milestoneOf = hotRead(['projectId', 'milestoneId'], (db, v: { projectId: string; milestoneId: string }) =>
  milestones(db).where('m.project', '=', v.projectId).where('m.id', '=', v.milestoneId),
);

/** The highest position on the roadmap (its milestone count, positions being 1..n): one entry at the end of the index. */
export async function highestPosition(tem: EntityManager, projectId: string): Promise<number> {
  const [row] = await maxPosition(tem, { projectId });
  return Number(row!.n);
}
const maxPosition = hotRead(['projectId'], (db, v: { projectId: string }) =>
  db
    .selectFrom('Milestone')
    .select((eb) => eb.fn.coalesce(eb.fn.max('position'), sql.lit(0)).as('n'))
    .where('project', '=', v.projectId),
);

/**
 * Moves the milestones at positions `from`..`to` by `by`, as changed now (a position is one of
 * their fields, as a reorder's moves are); returns them as they are now (their events need them).
 */
export function shiftPositions(tem: EntityManager, projectId: string, by: 1 | -1, from: number, to: number) {
  return reads(tem)
    .updateTable('Milestone')
    .set((eb) => ({ position: eb('position', '+', by), updatedAt: new Date() }))
    .where('project', '=', projectId)
    .where('position', '>=', from)
    .where('position', '<=', to)
    .returning([
      'id',
      'title',
      'description',
      'status',
      day('Milestone.startDate').as('startDate'),
      day('Milestone.dueDate').as('dueDate'),
      day('Milestone.originalDueDate').as('originalDueDate'),
      'dueDateMoves',
      'earlierDueDates',
      iso('Milestone.dueDateMovedAt').as('dueDateMovedAt'),
      'dueDateReason',
      'buildLogCount',
      iso('Milestone.lastBuildLogAt').as('lastBuildLogAt'),
      'position',
      iso('Milestone.completedAt').as('completedAt'),
      ...changeTimesOf('Milestone'),
    ])
    .execute();
}

/** A page of a milestone's due-date changes, newest first, after the change `afterId` (none: from the newest). */
export function dueDateChangesPage(em: EntityManager, v: { milestoneId: string; afterId?: string; limit: number }) {
  let query = reads(em)
    .selectFrom('MilestoneDueDateChange as c')
    .select([
      'c.id as id',
      'c.milestone as milestoneId',
      day('c.fromDate').as('fromDate'),
      day('c.toDate').as('toDate'),
      'c.reason as reason',
      iso('c.changedAt').as('changedAt'),
      'c.keyName as keyName',
      'c.channel as channel',
      'c.client as client',
    ])
    .where('c.milestone', '=', v.milestoneId);
  if (v.afterId) query = query.where('c.id', '<', v.afterId);
  return read(em, query.orderBy('c.id', 'desc').limit(v.limit));
}

/** Which of `ids` are milestones of the project. */
export async function milestonesAmong(
  em: EntityManager,
  projectId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await read(
    em,
    reads(em)
      .selectFrom('Milestone as m')
      .select('m.id as id')
      .where('m.project', '=', projectId)
      .where('m.id', 'in', [...ids]),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Each of `ids` counted again from the build logs that name it (hidden ones aside): how many, and
 * the newest one's time. The milestone's own `updatedAt` stays: a build log is not an edit of it.
 */
export function recountBuildLogs(tem: EntityManager, ids: readonly string[]) {
  return reads(tem)
    .updateTable('Milestone')
    .set((eb) => {
      const naming = eb
        .selectFrom('Post as b')
        .where('b.kind', '=', 'build_log')
        .where('b.hiddenAt', 'is', null)
        .where(sql<boolean>`b.milestone_ids @> array[${sql.ref('Milestone.id')}::text]`);
      return {
        buildLogCount: naming.select((e) => e.fn.countAll<number>().as('n')),
        lastBuildLogAt: naming.select((e) => e.fn.max('b.createdAt').as('at')),
      };
    })
    .where('Milestone.id', 'in', [...ids])
    .execute();
}

/** A deleted milestone taken out of the build logs that named it (they stay as they were otherwise). */
export function forgetMilestone(tem: EntityManager, milestoneId: string) {
  return reads(tem)
    .updateTable('Post')
    .set({ milestoneIds: sql<string[]>`array_remove(milestone_ids, ${milestoneId})` })
    .where(sql<boolean>`milestone_ids @> array[${milestoneId}]::text[]`)
    .execute();
}

/** The most milestones a status read counts one by one; past it, "more than". */
export const STATUS_COUNT_CAP = 100;

/**
 * A roadmap's status in one statement, from the project's row: whether the caller may read it,
 * its owner and whether the caller is a member (the access a read of the roadmap needs, so the
 * page after it checks nothing again), the project's pulse, the overdue milestones (how many, up to the cap, and the
 * first three by due date), the next one due, and the open ones whose due date moved (how many,
 * and the three that slipped furthest). Open: planned or in progress; `today` is the UTC day.
 */
export const roadmapStatusRead = hotRead(
  ['projectId', 'userId', 'today'],
  (db, v: { projectId: string; userId: string | null; today: string }) => {
    // The constants are written into the statement, not bound: a prepared statement's generic
    // plan cannot prove a partial index's predicate from parameters, and scanned the whole
    // roadmap (10,000 milestones in the bench) once per subquery.
    const open = () =>
      db
        .selectFrom('Milestone as s')
        .where('s.project', '=', v.projectId)
        .where(sql<boolean>`s.status in ('planned', 'in_progress')`);
    const line = [
      's.id as id',
      's.title as title',
      's.position as position',
      day('s.dueDate').as('dueDate'),
      's.dueDateMoves as moves',
      sql<number | null>`s.due_date - s.original_due_date`.as('slipDays'),
    ] as const;
    const overdue = () => open().where(overdueOn('s', v.today));
    const slipped = () => open().where(sql<boolean>`s.due_date_moves > 0`);
    const capped = (q: ReturnType<typeof open>) =>
      db
        .selectFrom(
          q
            .select(sql.lit(1).as('one'))
            .limit(sql.lit(STATUS_COUNT_CAP + 1))
            .as('c'),
        )
        .select((eb) => eb.fn.countAll<number>().as('n'));
    return db
      .selectFrom('Project as p')
      .innerJoin('User as u', 'u.id', 'p.owner')
      .where('p.id', '=', v.projectId)
      .select((eb) => [
        projectReadable(eb, v.userId).as('readable'),
        'u.id as ownerId',
        'u.username as ownerUsername',
        isMember(eb, v.userId).as('isMember'),
        'p.health as health',
        iso('p.healthSetAt').as('healthSetAt'),
        'p.healthPostId as healthPostId',
        iso('p.lastBuildLogAt').as('lastBuildLogAt'),
        iso('p.createdAt').as('createdAt'),
        capped(overdue()).as('overdueCount'),
        jsonArrayFrom(overdue().select(line).orderBy('s.dueDate').orderBy('s.position').limit(sql.lit(3))).as(
          'overdue',
        ),
        jsonObjectFrom(
          open()
            .select(line)
            .where(sql<boolean>`s.due_date >= ${v.today}::date`)
            .orderBy('s.dueDate')
            .orderBy('s.position')
            .limit(sql.lit(1)),
        ).as('nextDue'),
        capped(slipped()).as('slippedCount'),
        jsonArrayFrom(
          slipped()
            .select(line)
            .orderBy(sql`s.due_date - s.original_due_date`, (ob) => ob.desc().nullsLast())
            .orderBy('s.position')
            .limit(sql.lit(3)),
        ).as('slipped'),
      ]);
  },
);
