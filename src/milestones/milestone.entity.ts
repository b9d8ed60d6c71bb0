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
    completedAt: p.datetime().nullable(),
    position: p.integer(),
    ...changeTimes(),
  },
  // Checked at commit: a move shifts a range of positions and sets the moved one in separate
  // statements, and only the end state is 1..n without duplicates.
  uniques: [{ name: 'milestones_project_position_unique', properties: ['project', 'position'], deferMode: 'deferred' }],
  triggers: [resourceGoneTrigger('milestones')],
});
export class Milestone extends MilestoneSchema.class {}
MilestoneSchema.setClass(Milestone);
