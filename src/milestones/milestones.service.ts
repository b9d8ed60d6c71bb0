/**
 * The roadmap: milestones in a clean 1..n display order. Every write takes the project row
 * lock (SELECT … FOR UPDATE) first, so concurrent writers queue up instead of racing for
 * positions; the unique (project_id, position) constraint is checked at commit, so a range can
 * shift in any order, and it still guards the end state.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { rowById } from '../db/reads.js';
import type {
  MilestoneCreate,
  MilestoneUpdate,
  Milestone as MilestoneDto,
} from '../../codegen/generated/api/types.gen.js';
import { Milestone } from './milestone.entity.js';
import { Project } from '../projects/project.entity.js';
import type { Actor, Removed } from '../kernel/actor.js';
import { conflict, notFound, unprocessable } from '../kernel/problem.js';
import { zMilestonePosition } from '../../codegen/generated/api/zod.gen.js';
import { cursorList, type CursorList, decodeCursor, type Page } from '../kernel/cursor.js';
import { cursorWithin, isWalkCursor, startWalk, walkPage } from './roadmap-walks.js';
import {
  assertCanReadProject,
  lockProjectToManage,
  type CheckedAccess,
  checkedFor,
  projectTransaction,
  type ReadAccess,
  type SeenAccess,
} from '../projects/projects.service.js';
import { presentMilestone } from './milestones.presenter.js';
import {
  forgetMilestone,
  highestPosition,
  milestoneOf,
  type RoadmapFilters,
  roadmapPage,
  roadmapPageFiltered,
  shiftPositions,
} from './milestones.queries.js';
import { recordMilestoneEvent, recordReordered, recordShifted, type Shift } from './milestone-events.js';
import { assertDatesInOrder, assertDueDateChange, moveDueDate, type Via } from './due-dates.service.js';

const milestones = (n: number) => `${n} milestone${n === 1 ? '' : 's'}`;

/**
 * A page of the roadmap in display order. A first page that leaves milestones for later starts a
 * walk (./roadmap-walks.ts): its cursor serves each milestone once, whatever moves meanwhile.
 * The caller's access is checked here, unless `checked` says it was for this project and caller already.
 */
export async function listMilestones(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  query: { limit: number; cursor?: string } & RoadmapFilters,
  seen?: SeenAccess,
  checked?: CheckedAccess,
): Promise<Page<MilestoneDto>> {
  const access = checkedFor(checked, actor, projectId) ? checked : await readAccess(em, actor, projectId);
  seen?.(access);
  const list = roadmapList(projectId, query);
  const at = decodeCursor(query.cursor, isWalkCursor, list);
  if (at) {
    const { rows, nextCursor } = await walkPage(em, { ...query, projectId, list, at });
    return { items: rows.map(presentMilestone), nextCursor };
  }
  const first = { projectId, after: 0, limit: query.limit + 1 };
  const rows =
    query.statuses?.length || query.ids?.length || query.overdue !== undefined
      ? await roadmapPageFiltered(em, { ...first, statuses: query.statuses, ids: query.ids, overdue: query.overdue })
      : await roadmapPage(em, first);
  if (rows.length <= query.limit) return { items: rows.map(presentMilestone), nextCursor: null };
  const served = rows.slice(0, query.limit);
  return {
    items: served.map(presentMilestone),
    nextCursor: await startWalk(
      em,
      projectId,
      list,
      served.map((m) => m.id),
    ),
  };
}

const readAccess = async (em: EntityManager, actor: Actor, projectId: string): Promise<ReadAccess> => {
  const { project, role } = await assertCanReadProject(em, actor, projectId);
  return { owner: project.owner, role };
};

/** The list a roadmap cursor belongs to: the project, and the statuses and ids chosen (in any order), overdue or not. */
const roadmapList = (projectId: string, query: RoadmapFilters): CursorList =>
  cursorList(
    'roadmap',
    projectId,
    query.statuses?.length ? [...query.statuses].sort() : undefined,
    query.ids ? [...query.ids].sort() : undefined,
    // Left out when not chosen: the cursors given before the filter existed stay valid.
    ...(query.overdue === undefined ? [] : [query.overdue]),
  );

/**
 * The cursor after the first `kept` milestones of a page whose answer served only those (an MCP
 * answer cut to fit): the page asked for by `cursor` (none: the first), whose whole answer held
 * `pageIds` and carried `nextCursor`.
 */
export function cursorAfterServed(
  em: EntityManager,
  projectId: string,
  query: { cursor?: string; nextCursor?: string } & RoadmapFilters,
  page: { ids: readonly string[]; kept: number },
): Promise<string> {
  const list = roadmapList(projectId, query);
  return cursorWithin(em, {
    projectId,
    list,
    at: decodeCursor(query.cursor, isWalkCursor, list),
    next: decodeCursor(query.nextCursor, isWalkCursor, list),
    pageIds: page.ids,
    kept: page.kept,
  });
}

/** One milestone, as the roadmap lists it. */
export async function getMilestone(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  milestoneId: string,
): Promise<MilestoneDto> {
  await assertCanReadProject(em, actor, projectId);
  const row = await rowById(
    milestoneId,
    () => milestoneOf(em, { projectId, milestoneId }),
    `Project ${projectId} has no milestone with id ${milestoneId}.`,
  );
  return presentMilestone(row);
}

/**
 * Inside a transaction, owner only: takes the project's row lock, which every writer of the
 * roadmap waits for, and returns the milestone count. Positions are 1..n without gaps (every
 * write here keeps them so), so the count is the highest position.
 */
async function lockRoadmap(tem: EntityManager, actor: Actor, projectId: string): Promise<number> {
  await lockProjectToManage(tem, actor, projectId);
  return highestPosition(tem, projectId);
}

function completedAtFor(
  status: Milestone['status'],
  previous: Milestone['status'] | undefined,
  current: Date | null | undefined,
): Date | null {
  if (status !== 'done') return null;
  return previous === 'done' && current ? current : new Date();
}

/**
 * The most milestones a roadmap holds: the highest position the contract allows
 * (MilestonePosition's maximum in openapi/). Without it the next milestone would get a position
 * its own answer may not carry (found by the soak of `make bench`: a 500 from the response
 * validator after the 100,000th milestone).
 */
export const MAX_MILESTONES = zMilestonePosition.maxValue!;

export async function createMilestone(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  input: MilestoneCreate,
): Promise<MilestoneDto> {
  return projectTransaction(em, projectId, async (tem) => {
    const count = await lockRoadmap(tem, actor, projectId);
    if (count >= MAX_MILESTONES) {
      throw conflict(
        `The roadmap is full: it holds ${count} milestones, the most a roadmap can hold is ${MAX_MILESTONES}. Delete one before adding another.`,
      ).because('roadmap-full');
    }
    assertDatesInOrder(input.startDate, input.dueDate);
    const position = input.position ?? count + 1;
    if (position > count + 1)
      throw unprocessable(`position must be between 1 and ${count + 1}: the roadmap has ${milestones(count)}.`).because(
        'position-out-of-range',
      );
    const shifted =
      position <= count
        ? await recordShifted(tem, projectId, 1, await shiftPositions(tem, projectId, 1, position, count))
        : null;
    const status = input.status ?? 'planned';
    const milestone = tem.create(Milestone, {
      project: tem.getReference(Project, projectId),
      title: input.title.trim(),
      description: input.description ?? null,
      status,
      startDate: input.startDate ?? null,
      dueDate: input.dueDate ?? null,
      originalDueDate: input.dueDate ?? null,
      completedAt: completedAtFor(status, undefined, null),
      position,
    });
    await tem.flush();
    const presented = presentMilestone(milestone);
    await recordMilestoneEvent(tem, 'milestone.created', presented, { shifted });
    return presented;
  });
}

export async function updateMilestone(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  milestoneId: string,
  input: MilestoneUpdate,
  via?: Via,
): Promise<MilestoneDto> {
  return projectTransaction(em, projectId, async (tem) => {
    const count = await lockRoadmap(tem, actor, projectId);
    const milestone = await tem.findOne(Milestone, { id: milestoneId, project: projectId });
    if (!milestone) throw notFound(`Project ${projectId} has no milestone with id ${milestoneId}.`);
    const dueDateMoves = input.dueDate !== undefined && input.dueDate !== (milestone.dueDate ?? null);
    assertDueDateChange(input, dueDateMoves, milestone);
    const before = { ...milestone };
    let shifted: Shift | null = null;
    if (input.position !== undefined && input.position !== milestone.position) {
      if (input.position > count)
        throw unprocessable(`position must be between 1 and ${count}: the roadmap has ${milestones(count)}.`).because(
          'position-out-of-range',
        );
      const from = milestone.position;
      shifted =
        input.position > from
          ? await recordShifted(tem, projectId, -1, await shiftPositions(tem, projectId, -1, from + 1, input.position))
          : await recordShifted(tem, projectId, 1, await shiftPositions(tem, projectId, 1, input.position, from - 1));
      milestone.position = input.position;
    }
    if (input.title !== undefined) milestone.title = input.title.trim();
    if (input.description !== undefined) milestone.description = input.description;
    if (input.startDate !== undefined) milestone.startDate = input.startDate;
    const reason = input.dueDateReason?.trim();
    if (dueDateMoves) moveDueDate(tem, milestone, { to: input.dueDate ?? null, reason, actor, via });
    if (input.status !== undefined) {
      milestone.completedAt = completedAtFor(input.status, milestone.status, milestone.completedAt);
      milestone.status = input.status;
    }
    const changed = (
      ['title', 'description', 'status', 'startDate', 'dueDate', 'completedAt', 'position'] as const
    ).filter((field) => String(before[field]) !== String(milestone[field]));
    await tem.flush();
    const presented = presentMilestone(milestone);
    if (changed.length) {
      await recordMilestoneEvent(tem, 'milestone.updated', presented, {
        changed,
        previousPosition: changed.includes('position') ? before.position : null,
        shifted,
        dueDateMove: dueDateMoves
          ? { from: before.dueDate ?? null, to: milestone.dueDate ?? null, reason: reason ?? null }
          : null,
      });
    }
    return presented;
  });
}

export async function deleteMilestone(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  milestoneId: string,
): Promise<Removed> {
  return projectTransaction(em, projectId, async (tem) => {
    const count = await lockRoadmap(tem, actor, projectId);
    const milestone = await tem.findOne(Milestone, { id: milestoneId, project: projectId });
    if (!milestone) throw notFound(`Project ${projectId} has no milestone with id ${milestoneId}.`);
    await tem.nativeDelete(Milestone, { id: milestoneId });
    await forgetMilestone(tem, milestoneId);
    const shifted =
      milestone.position < count
        ? await recordShifted(
            tem,
            projectId,
            -1,
            await shiftPositions(tem, projectId, -1, milestone.position + 1, count),
          )
        : null;
    await recordMilestoneEvent(tem, 'milestone.deleted', presentMilestone(milestone), { shifted });
    return { name: milestone.title };
  });
}

export async function reorderMilestones(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  milestoneIds: string[],
  limit: number,
): Promise<Page<MilestoneDto>> {
  await projectTransaction(em, projectId, async (tem) => {
    await lockRoadmap(tem, actor, projectId);
    const current = await tem.find(Milestone, { project: projectId }, { fields: ['id', 'position'] });
    const known = new Set(current.map((m) => m.id));
    const missing = current.filter((m) => !milestoneIds.includes(m.id)).map((m) => m.id);
    const foreign = milestoneIds.filter((id) => !known.has(id));
    if (missing.length || foreign.length || milestoneIds.length !== current.length) {
      throw unprocessable(
        `milestoneIds must name each of the project's ${current.length} milestones exactly once` +
          (missing.length ? `; missing: ${missing.join(', ')}` : '') +
          (foreign.length ? `; not in this project: ${foreign.join(', ')}` : '') +
          '.',
      ).because('roadmap-order-mismatch');
    }
    const was = new Map(current.map((m) => [m.id, m.position]));
    const moved = milestoneIds.filter((id, i) => was.get(id) !== i + 1);
    for (const [i, id] of milestoneIds.entries())
      if (was.get(id) !== i + 1) await tem.nativeUpdate(Milestone, { id }, { position: i + 1, updatedAt: new Date() });
    await recordReordered(tem, projectId, moved, was);
  });
  return listMilestones(em, actor, projectId, { limit });
}
