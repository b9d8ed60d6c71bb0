/**
 * The evidence on the roadmap: the milestones a build log names as moved forward. A build log may
 * name only milestones of its own project; each named milestone carries how many build logs name
 * it and when the newest was posted, counted again by every write that changes that (a build log
 * posted, deleted, hidden or shown again).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { unprocessable } from '../kernel/problem.js';
import { milestonesAmong, recountBuildLogs } from './milestones.queries.js';

/** The ids (lowercase, each once, as createPost keeps them), each a milestone of the project (422 `unknown-milestone` naming the others). */
export async function assertMilestonesOf(em: EntityManager, projectId: string, ids: readonly string[]): Promise<void> {
  const known = await milestonesAmong(em, projectId, ids);
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length)
    throw unprocessable(
      `Project ${projectId} has no milestone with id ${unknown.join(', ')}: a build log names milestones of its own project (get_roadmap or GET /projects/${projectId}/milestones lists them).`,
    ).because('unknown-milestone');
}

/** The milestones a build log names, counted again after a change to it (none named: nothing to do). */
export async function recountEvidence(tem: EntityManager, milestoneIds: readonly string[]): Promise<void> {
  if (milestoneIds.length) await recountBuildLogs(tem, milestoneIds);
}
