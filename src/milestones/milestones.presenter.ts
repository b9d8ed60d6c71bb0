import type { Milestone as MilestoneDto } from '../../codegen/generated/api/types.gen.js';
import type { Milestone } from './milestone.entity.js';
import { isoString, type Timestamp } from '../db/hot-read.js';

/** What the presenter reads: a Milestone entity, or a row of the roadmap's hand-written select (its timestamps as text). */
export type MilestoneFields = Pick<Milestone, 'id' | 'title' | 'description' | 'status' | 'dueDate' | 'position'> & {
  project: { id: string };
  completedAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
};

export function presentMilestone(m: MilestoneFields): MilestoneDto {
  return {
    id: m.id,
    projectId: m.project.id,
    title: m.title,
    description: m.description ?? null,
    status: m.status,
    dueDate: m.dueDate ?? null,
    completedAt: m.completedAt ? isoString(m.completedAt) : null,
    position: m.position,
    createdAt: isoString(m.createdAt),
    updatedAt: isoString(m.updatedAt),
  };
}
