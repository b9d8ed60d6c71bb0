import type { Milestone as MilestoneDto } from '../../codegen/generated/api/types.gen.js';
import type { Milestone } from './milestone.entity.js';

export function presentMilestone(m: Milestone): MilestoneDto {
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
