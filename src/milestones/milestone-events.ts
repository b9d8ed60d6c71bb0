/** The roadmap's webhook events (src/outbox/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { anyoneListens, type RecordedEvent, recordEvents, shortened } from '../outbox/events.js';
import type { Milestone as MilestoneDto } from '../../codegen/generated/api/types.gen.js';
import { type MilestoneFields, presentMilestone } from './milestones.presenter.js';
import { Milestone } from './milestone.entity.js';

type MilestoneEventType = 'milestone.created' | 'milestone.updated' | 'milestone.deleted';
/** The other milestones a change moved: those at `fromPosition`..`toPosition` before it, now `by` away. */
export type Shift = { fromPosition: number; toPosition: number; by: 1 | -1 };
/** A due date that moved: from, to, and the reason given. */
type DueDateMove = { from: string | null; to: string | null; reason: string | null };
type Change = {
  changed?: string[];
  previousPosition?: number | null;
  shifted?: Shift | null;
  dueDateMove?: DueDateMove | null;
};

/**
 * The most milestones a single change tells of one by one: a roadmap holds up to 100,000, and
 * moving its first would otherwise send one event per milestone to every subscription.
 */
const SHIFT_EVENTS_MAX = 50;

/** The event of a change to a milestone, from its answer (presented once by the change's service). */
function milestoneEvent(type: MilestoneEventType, presented: MilestoneDto, change: Change = {}): RecordedEvent {
  const { resource, truncated } = shortened(presented, ['description']);
  return {
    type,
    projectId: presented.projectId,
    path: `/projects/${presented.projectId}/milestones/${presented.id}`,
    data: {
      milestone: resource,
      changed: change.changed ?? [],
      previousPosition: change.previousPosition ?? null,
      shifted: change.shifted ?? null,
      dueDateMove: change.dueDateMove ?? null,
      truncated,
    },
  };
}

export const recordMilestoneEvent = (
  tem: EntityManager,
  type: MilestoneEventType,
  milestone: MilestoneDto,
  change?: Change,
): Promise<void> => recordEvents(tem, [milestoneEvent(type, milestone, change)]);

/**
 * The milestones a move, an insert or a delete shifted by `by`: one `milestone.updated` each
 * when they are few (SHIFT_EVENTS_MAX); returns the range, which the change's own event carries.
 */
export async function recordShifted(
  tem: EntityManager,
  projectId: string,
  by: 1 | -1,
  shifted: readonly Omit<MilestoneFields, 'project' | 'projectId'>[],
): Promise<Shift | null> {
  if (shifted.length === 0) return null;
  const before = shifted.map((m) => m.position - by);
  const range = { fromPosition: Math.min(...before), toPosition: Math.max(...before), by };
  if (shifted.length <= SHIFT_EVENTS_MAX)
    await recordEvents(
      tem,
      shifted.map((m) =>
        milestoneEvent('milestone.updated', presentMilestone({ ...m, projectId }), {
          changed: ['position'],
          previousPosition: m.position - by,
        }),
      ),
    );
  return range;
}

/** One `milestone.updated` for each milestone a reorder moved (`was`: their positions before), read only when someone listens. */
export async function recordReordered(
  tem: EntityManager,
  projectId: string,
  moved: readonly string[],
  was: ReadonlyMap<string, number>,
): Promise<void> {
  if (!moved.length || !(await anyoneListens(tem, projectId, 'milestone.updated'))) return;
  const rows = await tem.find(Milestone, { id: { $in: [...moved] } }, { refresh: true });
  await recordEvents(
    tem,
    rows.map((m) =>
      milestoneEvent('milestone.updated', presentMilestone(m), {
        changed: ['position'],
        previousPosition: was.get(m.id) ?? null,
      }),
    ),
  );
}
