/**
 * A roadmap's status, in what an agent repeats to its person: the project's health and its age,
 * the last build log, what is overdue, the next milestone due, and what slipped and by how much.
 * Read in one statement from the project's row (./milestones.queries.ts `roadmapStatusRead`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { presentPulse } from '../projects/projects.presenter.js';
import { roadmapStatusRead, STATUS_COUNT_CAP } from './milestones.queries.js';
import { utcDay } from '../kernel/days.js';
import { presentableLine } from '../kernel/text.js';
import { type CheckedAccess, checkedAccess } from '../projects/projects.service.js';
import { isUuid } from '../kernel/ids.js';

/** A milestone as a status line names it. */
export type StatusMilestone = {
  id: string;
  title: string;
  position: number;
  dueDate: string;
  moves: number;
  slipDays: number | null;
};

export type RoadmapStatus = {
  /**
   * The caller's access to the project, as the statement checked it: a page read after it checks
   * nothing again, and whose roadmap it is to the caller (a title is the owner's words).
   */
  access: CheckedAccess;
  pulse: Pick<ProjectDto, 'health' | 'lastBuildLogAt' | 'daysSinceLastBuildLog' | 'stale'>;
  /** How many are overdue (and how many slipped), up to `countCap`; past it, more. */
  overdueCount: number;
  overdue: StatusMilestone[];
  nextDue: StatusMilestone | null;
  slippedCount: number;
  slipped: StatusMilestone[];
  countCap: number;
};

/** A title as every answer shows it: one line, something visible (src/kernel/text.ts). */
const titled = (m: StatusMilestone): StatusMilestone => ({
  ...m,
  title: presentableLine(m.title, 'Untitled milestone'),
});

/**
 * The roadmap's status, in one statement that also checks the caller may read the project (a
 * 404 otherwise, as every read of it is) and says what a read of its roadmap needs of that.
 */
export async function roadmapStatus(em: EntityManager, actor: Actor, projectId: string): Promise<RoadmapStatus> {
  const [row] = isUuid(projectId)
    ? await roadmapStatusRead(em, { projectId, userId: actorId(actor), today: utcDay() })
    : [];
  const access = checkedAccess(
    actor,
    projectId,
    row && { readable: row.readable, isMember: row.isMember, owner: { id: row.ownerId, username: row.ownerUsername } },
  );
  // checkedAccess has refused a missing row.
  const found = row!;
  return {
    access,
    pulse: presentPulse(found),
    overdueCount: Number(found.overdueCount ?? 0),
    overdue: (found.overdue as StatusMilestone[]).map(titled),
    nextDue: found.nextDue ? titled(found.nextDue as StatusMilestone) : null,
    slippedCount: Number(found.slippedCount ?? 0),
    slipped: (found.slipped as StatusMilestone[]).map(titled),
    countCap: STATUS_COUNT_CAP,
  };
}
