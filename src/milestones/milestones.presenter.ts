import type { Milestone as MilestoneDto } from '../../codegen/generated/api/types.gen.js';
import type { Milestone } from './milestone.entity.js';

/** What the presenter reads: a Milestone entity, or a row of the roadmap's hand-written select. */
export type MilestoneFields = Pick<Milestone, 'id' | 'title' | 'description' | 'status' | 'dueDate' | 'completedAt' | 'position' | 'createdAt' | 'updatedAt'>
  & { project: { id: string } };

export function presentMilestone(m: MilestoneFields): MilestoneDto {
  return {
    id: m.id,
    projectId: m.project.id,
    title: m.title,
    description: m.description ?? null,
    status: m.status,
    dueDate: m.dueDate ?? null,
    completedAt: m.completedAt ? m.completedAt.toISOString() : null,
    position: m.position,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}
