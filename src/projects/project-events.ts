/** A project's own webhook events (src/webhooks/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvents, shortened } from '../outbox/events.js';
import { presentMember, presentProject, type ProjectFields } from './projects.presenter.js';
import type { ProjectMember } from './project.entity.js';

export async function recordProjectUpdated(
  tem: EntityManager,
  project: ProjectFields,
  changed: string[],
): Promise<void> {
  const { resource, truncated } = shortened(presentProject(project), ['description']);
  await recordEvents(tem, [
    {
      type: 'project.updated',
      projectId: project.id,
      path: `/projects/${project.id}`,
      data: { project: resource, changed, truncated },
    },
  ]);
}

export async function recordMemberEvent(
  tem: EntityManager,
  type: 'project.member_added' | 'project.member_removed',
  projectId: string,
  member: ProjectMember,
): Promise<void> {
  await recordEvents(tem, [
    {
      type,
      projectId,
      path: `/projects/${projectId}/members`,
      data: { member: presentMember(member), truncated: [] },
    },
  ]);
}
