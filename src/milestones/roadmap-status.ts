/**
 * A roadmap's status, in what an agent repeats to its person: the project's health and its age,
 * the last build log, what is overdue, the next milestone due, and what slipped and by how much.
 * Read in one statement from the project's row (./milestones.queries.ts `roadmapStatusRead`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { notFound } from '../kernel/problem.js';
import { presentPulse } from '../projects/projects.presenter.js';
import { roadmapStatusRead, STATUS_COUNT_CAP } from './milestones.queries.js';
import { utcDay } from '../kernel/days.js';
import { presentableLine } from '../kernel/text.js';
import type { CheckedAccess } from '../projects/projects.service.js';

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
  /** Whose roadmap it is to the caller: a title is the owner's words. */
  role: 'owner' | 'other';
  /** The caller's access to the project, as the statement checked it: a page read after it checks nothing again. */
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
  const [row] = await roadmapStatusRead(em, { projectId, userId: actorId(actor), today: utcDay() });
  if (!row?.readable) throw notFound(`No project with id ${projectId}.`).because('unknown-project');
  const role = row.ownerId === actor.userId ? 'owner' : row.isMember ? 'member' : 'none';
  return {
    role: role === 'owner' ? 'owner' : 'other',
    access: { projectId, owner: { id: row.ownerId, username: row.ownerUsername }, role },
    pulse: presentPulse(row),
    overdueCount: Number(row.overdueCount ?? 0),
    overdue: (row.overdue as StatusMilestone[]).map(titled),
    nextDue: row.nextDue ? titled(row.nextDue as StatusMilestone) : null,
    slippedCount: Number(row.slippedCount ?? 0),
    slipped: (row.slipped as StatusMilestone[]).map(titled),
    countCap: STATUS_COUNT_CAP,
  };
}
