import { resourceGoneTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { Project } from '../projects/project.entity.js';

const MILESTONE_STATUSES = ['planned', 'in_progress', 'done', 'cancelled'] as const;

const MilestoneSchema = defineEntity({
  name: 'Milestone',
  tableName: 'milestones',
  properties: {
    id: uuidv7Key(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    title: p.string().length(200),
    description: p.text().nullable(),
    status: p.enum(MILESTONE_STATUSES).default('planned'),
    startDate: p.date().nullable(),
    dueDate: p.date().nullable(),
    /**
     * The due date's history in brief, kept beside it by every write that moves it (all under the
     * project's row lock), so the roadmap reads it without a join; every change is also a row of
     * MilestoneDueDateChange.
     */
    originalDueDate: p.date().nullable(),
    dueDateMoves: p.integer().default(0),
    earlierDueDates: p.type(TextArrayType).default([]),
    dueDateMovedAt: p.datetime().nullable(),
    dueDateReason: p.string().length(500).nullable(),
    /**
     * The build logs that name it as moved forward (hidden ones aside): how many, and when the
     * newest was posted. Kept by the build-log writes (./evidence.ts), so the roadmap reads them
     * without a join.
     */
    buildLogCount: p.integer().default(0),
    lastBuildLogAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    position: p.integer(),
    ...changeTimes(),
  },
  // Checked at commit: a move shifts a range of positions and sets the moved one in separate
  // statements, and only the end state is 1..n without duplicates.
  uniques: [{ name: 'milestones_project_position_unique', properties: ['project', 'position'], deferMode: 'deferred' }],
  indexes: [
    /** Migration ..._roadmap_evidence: the open milestones by due date (overdue, next due) and those that slipped. */
    {
      name: 'milestones_open_due_idx',
      properties: ['project', 'dueDate'],
      where: "status in ('planned', 'in_progress')",
    },
    {
      name: 'milestones_open_slipped_idx',
      properties: ['project'],
      where: "status in ('planned', 'in_progress') and due_date_moves > 0",
    },
  ],
  triggers: [resourceGoneTrigger('milestones')],
});
export class Milestone extends MilestoneSchema.class {}
MilestoneSchema.setClass(Milestone);
