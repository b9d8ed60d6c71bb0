import { presentableLine } from '../kernel/text.js';
import type {
  Milestone as MilestoneDto,
  MilestoneDueDateChange as ChangeDto,
} from '../../codegen/generated/api/types.gen.js';
import type { Milestone } from './milestone.entity.js';
import { isoString, type Timestamp } from '../db/reads.js';
import { daysBetween, utcDay } from '../kernel/days.js';

/** What the presenter reads: a Milestone entity, or a row of the roadmap's typed read (its timestamps as text). */
export type MilestoneFields = Pick<
  Milestone,
  | 'id'
  | 'title'
  | 'description'
  | 'status'
  | 'startDate'
  | 'dueDate'
  | 'originalDueDate'
  | 'dueDateMoves'
  | 'earlierDueDates'
  | 'dueDateReason'
  | 'buildLogCount'
  | 'position'
> & {
  lastBuildLogAt?: Timestamp | null;
  dueDateMovedAt?: Timestamp | null;
  completedAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
} & ({ project: { id: string } } | { projectId: string });

export function presentMilestone(m: MilestoneFields): MilestoneDto {
  const dueDate = m.dueDate ?? null;
  return {
    id: m.id,
    projectId: 'projectId' in m ? m.projectId : m.project.id,
    title: presentableLine(m.title, 'Untitled milestone'),
    description: m.description ?? null,
    status: m.status,
    startDate: m.startDate ?? null,
    dueDate,
    overdue: isOverdue(m.status, dueDate, utcDay()),
    dueDateHistory:
      m.dueDateMoves === 0
        ? null
        : {
            moves: m.dueDateMoves,
            slipDays: dueDate && m.originalDueDate ? daysBetween(m.originalDueDate, dueDate) : null,
            originalDueDate: m.originalDueDate ?? null,
            earlierDueDates: [...m.earlierDueDates],
            lastMovedAt: m.dueDateMovedAt ? isoString(m.dueDateMovedAt) : null,
            lastReason: m.dueDateMovedAt ? (m.dueDateReason ?? null) : null,
          },
    buildLogCount: m.buildLogCount,
    lastBuildLogAt: m.lastBuildLogAt ? isoString(m.lastBuildLogAt) : null,
    completedAt: m.completedAt ? isoString(m.completedAt) : null,
    position: m.position,
    createdAt: isoString(m.createdAt),
    updatedAt: isoString(m.updatedAt),
  };
}

/**
 * Overdue: the due day is over in UTC (the day before `today` or earlier) and the milestone is
 * neither done nor cancelled. The roadmap's `overdue` filter says the same in SQL, given the same
 * day (./milestones.queries.ts), so a page and its filter agree around midnight.
 */
const isOverdue = (status: Milestone['status'], dueDate: string | null, today: string): boolean =>
  dueDate !== null && dueDate < today && (status === 'planned' || status === 'in_progress');

/** A due-date change as read (src/milestones/milestones.queries.ts `dueDateChangesPage`). */
export type DueDateChangeRow = {
  id: string;
  milestoneId: string;
  fromDate: string | null;
  toDate: string | null;
  reason: string | null;
  changedAt: string;
  keyName: string | null;
  channel: 'rest' | 'mcp' | null;
  client: string | null;
};

/** A due-date change; which key and client made it only for the owner (`forOwner`), whose keys they are. */
export function presentDueDateChange(row: DueDateChangeRow, forOwner: boolean): ChangeDto {
  return {
    id: row.id,
    milestoneId: row.milestoneId,
    from: row.fromDate,
    to: row.toDate,
    days: row.fromDate && row.toDate ? daysBetween(row.fromDate, row.toDate) : null,
    reason: row.reason,
    changedAt: row.changedAt,
    via: forOwner && row.channel ? { keyName: row.keyName, channel: row.channel, client: row.client } : null,
  };
}
