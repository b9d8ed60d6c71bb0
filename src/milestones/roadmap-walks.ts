/**
 * Walking a roadmap page by page while others reorder it. Positions move, so a cursor holding a
 * position would serve a milestone twice (moved below the cursor) or never (moved above it). A
 * walk instead records which milestones each page served:
 * - the next page serves the first milestones, in the roadmap's order at that moment, that the
 *   walk has not served yet: no milestone twice, and none that was on the roadmap for the whole
 *   walk is left out (one added meanwhile may be served too);
 * - a page asked for again (a retry) serves the same milestones, as they are now, less those
 *   deleted or no longer matching the filters.
 * A walk starts only when a first page leaves milestones for later, and its cursors work for
 * WALK_HOURS (docs/mcp.md, Stable pages).
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

/** A walk cursor: the walk, and the page it asks for (2 for the second page). */
export type WalkAt = { w: string; n: number };
export const isWalkCursor = (v: unknown): v is WalkAt => {
  const { w, n } = (v ?? {}) as { w?: unknown; n?: unknown };
  return typeof w === 'string' && isUuid(w) && Number.isInteger(n) && (n as number) >= 2 && (n as number) <= 100_000;
};

const cursorFor = (walkId: string, page: number, list: CursorList) => encodeCursor({ w: walkId, n: page }, list);

const expired = () =>
  new ProblemError(
    400,
    'invalid-cursor',
    'Invalid cursor',
    `This cursor's walk through the roadmap is over (a walk's cursors work for ${WALK_HOURS} hours); start again without a cursor.`,
    { errors: [{ path: '/query/cursor', message: 'an expired roadmap walk' }] },
  );

/** Starts a walk whose first page served `ids`; the cursor for its second page. Old walks go meanwhile. */
export async function startWalk(
  em: EntityManager,
  projectId: string,
  list: CursorList,
  ids: readonly string[],
): Promise<string> {
  await em.nativeDelete(RoadmapWalk, { createdAt: { $lt: new Date(Date.now() - WALK_HOURS * 3_600_000) } });
  const walk = em.create(RoadmapWalk, { project: em.getReference(Project, projectId), list, pages: [[...ids]] });
  await em.flush();
  return cursorFor(walk.id, 2, list);
}

/** The walk the cursor names, locked for this transaction, if it is this list's and not over. */
async function lockedWalk(tem: EntityManager, projectId: string, list: CursorList, at: WalkAt) {
  const walk = await tem.findOne(
    RoadmapWalk,
    { id: at.w, project: projectId, list, createdAt: { $gte: new Date(Date.now() - WALK_HOURS * 3_600_000) } },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  // A page after the next one was never offered: the cursor was made up.
  if (!walk || at.n > walk.pages.length + 1) throw expired();
  return walk;
}

type Row = Awaited<ReturnType<typeof roadmapUnserved>>[number];

/**
 * Page `at.n` of the walk: the milestones it served before when asked again, else the first
 * `limit` not served yet. With the cursor of the page after it, when the roadmap holds more.
 */
export async function walkPage(
  em: EntityManager,
  v: { projectId: string; list: CursorList; at: WalkAt; limit: number } & RoadmapFilters,
): Promise<{ rows: Row[]; nextCursor: string | null }> {
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
    // A page served before: the same milestones, as they are now.
    const ids = walk.pages[index]!;
    const found = new Map((await roadmapAmong(tem, { ...v, among: ids })).map((r) => [r.id, r]));
    const rows = ids.flatMap((id) => found.get(id) ?? []);
    const more =
      walk.pages.length > v.at.n ||
      (await roadmapUnserved(tem, { ...v, limit: 1, served: walk.pages.flat() })).length > 0;
    return { rows, nextCursor: more ? cursorFor(walk.id, v.at.n + 1, v.list) : null };
  });
}

/**
 * A page that served only the first of its milestones (an MCP answer cut to fit its cap): the
 * walk records just those, so the next page starts with the rest. `at` is the page the request
 * asked for (none for a first page), `next` the cursor its answer would have carried.
 */
export async function servedOnly(
  em: EntityManager,
  v: { projectId: string; list: CursorList; at?: WalkAt; next?: WalkAt; ids: readonly string[] },
): Promise<string> {
  const page = v.next ? { w: v.next.w, n: v.next.n - 1 } : v.at;
  if (!page) return startWalk(em, v.projectId, v.list, v.ids);
  return em.transactional(async (tem) => {
    const walk = await tem.findOneOrFail(RoadmapWalk, { id: page.w }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const pages = walk.pages.slice(0, page.n);
    pages[page.n - 1] = [...v.ids];
    walk.pages = pages;
    return cursorFor(walk.id, page.n + 1, v.list);
  });
}
