import { presentableLine } from '../kernel/text.js';
import type { Milestone as MilestoneDto } from '../../codegen/generated/api/types.gen.js';
import type { Milestone } from './milestone.entity.js';
import { isoString, type Timestamp } from '../db/reads.js';

/** What the presenter reads: a Milestone entity, or a row of the roadmap's typed read (its timestamps as text). */
export type MilestoneFields = Pick<Milestone, 'id' | 'title' | 'description' | 'status' | 'dueDate' | 'position'> & {
  completedAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
} & ({ project: { id: string } } | { projectId: string });

export function presentMilestone(m: MilestoneFields): MilestoneDto {
  return {
    id: m.id,
    projectId: 'projectId' in m ? m.projectId : m.project.id,
    title: presentableLine(m.title, 'Untitled milestone'),
    description: m.description ?? null,
    status: m.status,
    dueDate: m.dueDate ?? null,
    completedAt: m.completedAt ? isoString(m.completedAt) : null,
    position: m.position,
    createdAt: isoString(m.createdAt),
    updatedAt: isoString(m.updatedAt),
  };
}
