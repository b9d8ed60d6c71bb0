/** The roadmap's webhook events (src/webhooks/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { anyoneListens, recordEvent, shortened } from '../outbox/events.js';
import { type MilestoneFields, presentMilestone } from './milestones.presenter.js';

type MilestoneEventType = 'milestone.created' | 'milestone.updated' | 'milestone.deleted';

export function recordMilestoneEvent(
  tem: EntityManager,
  type: MilestoneEventType,
  milestone: MilestoneFields,
  change: { changed?: string[]; previousPosition?: number | null } = {},
): void {
  const presented = presentMilestone(milestone);
  const { resource, truncated } = shortened(presented, ['description']);
  recordEvent(tem, {
    type,
    projectId: presented.projectId,
    path: `/projects/${presented.projectId}/milestones/${presented.id}`,
    data: {
      milestone: resource,
      changed: change.changed ?? [],
      previousPosition: change.previousPosition ?? null,
      truncated,
    },
  });
}

/**
 * One `milestone.updated` for each milestone that a move, an insert or a delete shifted by `by`,
 * when a subscription listens for them (a roadmap may hold 100,000 milestones).
 */
export async function recordShifted(
  tem: EntityManager,
  projectId: string,
  by: 1 | -1,
  shifted: readonly Omit<MilestoneFields, 'project' | 'projectId'>[],
): Promise<void> {
  if (shifted.length === 0 || !(await anyoneListens(tem, projectId, 'milestone.updated'))) return;
  for (const m of shifted)
    recordMilestoneEvent(
      tem,
      'milestone.updated',
      { ...m, projectId },
      { changed: ['position'], previousPosition: m.position - by },
    );
}
