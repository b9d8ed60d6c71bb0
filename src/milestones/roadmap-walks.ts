/**
 * Walking a roadmap page by page while others reorder it. Positions move, so a cursor holding a
 * position would serve a milestone twice (moved below the cursor) or never (moved above it). A
 * walk instead records which milestones each page served:
 * - the next page serves the first milestones, in the roadmap's order at that moment, that the
 *   walk has not served yet: no milestone twice, and none that was on the roadmap for the whole
 *   walk is left out (one added meanwhile may be served too);
 * - a page asked for again (a retry) serves the same milestones, as they are now, less those
 *   deleted or no longer matching the filters.
 * A walk starts only when a first page leaves milestones for later (or its MCP answer was cut
 * short to fit its cap), and its cursors work for WALK_HOURS (docs/decisions/0010-roadmap-walks.md).
 */
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { RoadmapWalk } from './roadmap-walk.entity.js';
import { Project } from '../projects/project.entity.js';
import { type CursorList, encodeCursor } from '../kernel/cursor.js';
import { ProblemError } from '../kernel/problem.js';
import { isUuid } from '../kernel/ids.js';
import { type RoadmapFilters, roadmapAmong, roadmapUnserved } from './milestones.queries.js';

/** How long a walk's cursors work. */
const WALK_HOURS = 24;

/**
 * A walk cursor: the walk, the page it asks for (2 for the second page), and how many of that
 * page's milestones were served already (an answer cut short; none when left out).
 */
export type WalkAt = { w: string; n: number; s?: number };
const upTo = (v: unknown, max: number) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max;
export const isWalkCursor = (v: unknown): v is WalkAt => {
  const { w, n, s } = (v ?? {}) as { w?: unknown; n?: unknown; s?: unknown };
  return (
    typeof w === 'string' &&
    isUuid(w) &&
    upTo(n, 100_000) &&
    (n as number) >= 1 &&
    (s === undefined || upTo(s, 100_000))
  );
};

const cursorFor = (walkId: string, page: number, list: CursorList, skip = 0) =>
  encodeCursor(skip ? { w: walkId, n: page, s: skip } : { w: walkId, n: page }, list);

const expired = () =>
  new ProblemError(
    400,
    'invalid-cursor',
    'Invalid cursor',
    `This cursor's walk through the roadmap is over (a walk's cursors work for ${WALK_HOURS} hours); start again without a cursor.`,
    { errors: [{ path: '/query/cursor', message: 'an expired roadmap walk' }] },
  );

/** A new walk whose first page served `ids`. Old walks go meanwhile. */
async function createWalk(em: EntityManager, projectId: string, list: CursorList, ids: readonly string[]) {
  await em.nativeDelete(RoadmapWalk, { createdAt: { $lt: new Date(Date.now() - WALK_HOURS * 3_600_000) } });
  const walk = em.create(RoadmapWalk, { project: em.getReference(Project, projectId), list, pages: [[...ids]] });
  await em.flush();
  return walk.id;
}

/** Starts a walk whose first page served `ids`; the cursor for its second page. */
export async function startWalk(
  em: EntityManager,
  projectId: string,
  list: CursorList,
  ids: readonly string[],
): Promise<string> {
  return cursorFor(await createWalk(em, projectId, list, ids), 2, list);
}

/** The walk the cursor names, locked for this transaction, if it is this list's and not over. */
async function lockedWalk(tem: EntityManager, projectId: string, list: CursorList, at: WalkAt) {
  const walk = await tem.findOne(
    RoadmapWalk,
    { id: at.w, project: projectId, list, createdAt: { $gte: new Date(Date.now() - WALK_HOURS * 3_600_000) } },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  // A page after the next one was never offered, nor a part of a page not served yet: made up.
  if (!walk || at.n > walk.pages.length + 1 || (at.n === walk.pages.length + 1 && at.s)) throw expired();
  return walk;
}

/**
 * Page `at.n` of the walk (from its `at.s`th milestone): the milestones it served before when
 * asked again, else the first `limit` not served yet. With the cursor that goes on, when the
 * roadmap holds more. A walk's past pages are never rewritten.
 */
export async function walkPage(
  em: EntityManager,
  v: { projectId: string; list: CursorList; at: WalkAt; limit: number } & RoadmapFilters,
) {
  return em.transactional(async (tem) => {
    const walk = await lockedWalk(tem, v.projectId, v.list, v.at);
    const index = v.at.n - 1;
    if (index === walk.pages.length) {
      // A page not served yet: the first not served, and one more to know whether more follow.
      const found = await roadmapUnserved(tem, { ...v, limit: v.limit + 1, served: walk.pages.flat() });
      const rows = found.slice(0, v.limit);
      walk.pages = [...walk.pages, rows.map((r) => r.id)];
      return { rows, nextCursor: found.length > v.limit ? cursorFor(walk.id, v.at.n + 1, v.list) : null };
    }
    // A page served before: the same milestones, as they are now, from where the cursor says.
    const page = walk.pages[index]!;
    const skip = v.at.s ?? 0;
    const ids = page.slice(skip, skip + v.limit);
    const found = new Map((await roadmapAmong(tem, { ...v, among: ids })).map((r) => [r.id, r]));
    const rows = ids.flatMap((id) => found.get(id) ?? []);
    if (skip + v.limit < page.length) return { rows, nextCursor: cursorFor(walk.id, v.at.n, v.list, skip + v.limit) };
    const more =
      walk.pages.length > v.at.n ||
      (await roadmapUnserved(tem, { ...v, limit: 1, served: walk.pages.flat() })).length > 0;
    return { rows, nextCursor: more ? cursorFor(walk.id, v.at.n + 1, v.list) : null };
  });
}

/**
 * The cursor after the first `kept` milestones of a page whose answer served only those (an MCP
 * answer cut to fit its cap): the same page, from the next one. `at` is the cursor the request
 * sent (none for a first page), `next` the one its whole answer carried, `pageIds` its ids.
 */
export async function cursorWithin(
  em: EntityManager,
  v: { projectId: string; list: CursorList; at?: WalkAt; next?: WalkAt; pageIds: readonly string[]; kept: number },
): Promise<string> {
  if (v.at) return cursorFor(v.at.w, v.at.n, v.list, (v.at.s ?? 0) + v.kept);
  // A first page: its walk, or one started now if the page held the whole list.
  const walkId = v.next?.w ?? (await createWalk(em, v.projectId, v.list, v.pageIds));
  return cursorFor(walkId, 1, v.list, v.kept);
}
