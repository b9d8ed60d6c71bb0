/**
 * A project's pulse: its latest health, as the newest build log that reported one said it, and
 * when its newest build log was posted. Kept on the project's row by the build-log writes (a new
 * one in its own transaction; a delete, a hide or an unhide by reading the build logs again),
 * each under the project's row lock (`holdPulse`), so two writers cannot leave an older build
 * log's word.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ProjectHealthInput } from '../../codegen/generated/api/types.gen.js';
import { lockedPulse, newestBuildLogs, setPulse } from './projects.queries.js';

export type Health = ProjectHealthInput;
/** A change of the project's health a build-log write made: from (null: none) and to. */
export type HealthChange = { from: Health | null; to: Health | null };

/** No build log for more than this many days makes a project stale (documented in docs/api.md). */
export const STALE_AFTER_DAYS = 14;

/**
 * Takes the project's row lock for a build-log write, before it touches any post: the roadmap's
 * writers lock the project first too (then the milestones, then the posts that name one), so
 * every writer meets the others in the same order and none waits on another in a cycle.
 */
export async function holdPulse(tem: EntityManager, projectId: string): Promise<void> {
  await lockedPulse(tem, projectId);
}

const changeOf = (from: Health | null, to: Health | null): HealthChange | null => (from === to ? null : { from, to });

/** A new build log of the project, posted at `at`, with the health it reported (or none). */
export async function noteBuildLog(
  tem: EntityManager,
  projectId: string,
  log: { id: string; at: Date; health: Health | null },
): Promise<HealthChange | null> {
  const now = await lockedPulse(tem, projectId);
  if (!now) return null;
  const newer = (then: Date | null) => !then || new Date(then).getTime() <= log.at.getTime();
  const reports = log.health !== null && newer(now.healthSetAt);
  await setPulse(tem, projectId, {
    health: reports ? log.health : now.health,
    healthSetAt: reports ? log.at : now.healthSetAt,
    healthPostId: reports ? log.id : undefined,
    lastBuildLogAt: newer(now.lastBuildLogAt) ? log.at : now.lastBuildLogAt,
  });
  return reports ? changeOf(now.health, log.health) : null;
}

/** After a build log of the project was deleted, hidden or shown again: the pulse read from the build logs. */
export async function refreshPulse(tem: EntityManager, projectId: string): Promise<HealthChange | null> {
  const now = await lockedPulse(tem, projectId);
  if (!now) return null;
  const { newestAt, reported } = await newestBuildLogs(tem, projectId);
  const health = (reported?.health as Health | null | undefined) ?? null;
  await setPulse(tem, projectId, {
    health,
    healthSetAt: reported ? new Date(reported.createdAt) : null,
    healthPostId: reported?.id ?? null,
    lastBuildLogAt: newestAt ? new Date(newestAt) : null,
  });
  return changeOf(now.health, health);
}
