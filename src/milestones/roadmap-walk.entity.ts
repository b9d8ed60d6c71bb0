import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { Project } from '../projects/project.entity.js';

/**
 * A walk through a roadmap by pages (src/milestones/roadmap-walks.ts): which milestones each page
 * served, so that the next page serves the first ones not served yet, whatever moved meanwhile,
 * and a page asked for again serves the same milestones. Kept a day.
 */
const RoadmapWalkSchema = defineEntity({
  name: 'RoadmapWalk',
  tableName: 'roadmap_walks',
  properties: {
    id: uuidv7Key(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    /** The list the walk belongs to (src/kernel/cursor.ts): the project and its filters. */
    list: p.string().length(16),
    /** The milestone ids each page served, first page first. */
    pages: p.json<string[][]>(),
    createdAt: madeAt(),
  },
  indexes: [
    { name: 'roadmap_walks_created_at_idx', properties: ['createdAt'] },
    // A project's deletion removes its walks: found by this index, not by a scan.
    { name: 'roadmap_walks_project_idx', properties: ['project'] },
  ],
});
export class RoadmapWalk extends RoadmapWalkSchema.class {}
RoadmapWalkSchema.setClass(RoadmapWalk);
