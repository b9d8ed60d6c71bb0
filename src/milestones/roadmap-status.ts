/**
 * A roadmap's status, in what an agent repeats to its person: the project's health and its age,
 * the last build log, what is overdue, the next milestone due, and what slipped and by how much.
 * Read in one statement beside the project (./milestones.queries.ts `roadmapStatusRead`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../kernel/actor.js';
import { assertCanReadProject } from '../projects/projects.service.js';
import { presentProject } from '../projects/projects.presenter.js';
import { roadmapStatusRead, STATUS_COUNT_CAP } from './milestones.queries.js';

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
  role: 'owner' | 'member' | 'none';
  pulse: Pick<ProjectDto, 'health' | 'lastBuildLogAt' | 'daysSinceLastBuildLog' | 'stale'>;
  /** How many are overdue (and how many slipped), up to `countCap`; past it, more. */
  overdueCount: number;
  overdue: StatusMilestone[];
  nextDue: StatusMilestone | null;
  slippedCount: number;
  slipped: StatusMilestone[];
  countCap: number;
};

export async function roadmapStatus(em: EntityManager, actor: Actor, projectId: string): Promise<RoadmapStatus> {
  const { project, role } = await assertCanReadProject(em, actor, projectId);
  const { health, lastBuildLogAt, daysSinceLastBuildLog, stale } = presentProject(project);
  const [row] = await roadmapStatusRead(em, { projectId });
  return {
    role,
    pulse: { health, lastBuildLogAt, daysSinceLastBuildLog, stale },
    overdueCount: Number(row?.overdueCount ?? 0),
    overdue: (row?.overdue ?? []) as StatusMilestone[],
    nextDue: (row?.nextDue ?? null) as StatusMilestone | null,
    slippedCount: Number(row?.slippedCount ?? 0),
    slipped: (row?.slipped ?? []) as StatusMilestone[],
    countCap: STATUS_COUNT_CAP,
  };
}
