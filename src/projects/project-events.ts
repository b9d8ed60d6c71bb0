/** A project's own webhook events (src/outbox/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvents, shortened } from '../outbox/events.js';
import type { Member as MemberDto, Project as ProjectDto } from '../../codegen/generated/api/types.gen.js';

/** `project.updated`, from the project's answer (presented once by the change's service). */
export async function recordProjectUpdated(tem: EntityManager, project: ProjectDto, changed: string[]): Promise<void> {
  const { resource, truncated } = shortened(project, ['description']);
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
  member: MemberDto,
): Promise<void> {
  await recordEvents(tem, [
    {
      type,
      projectId,
      path: `/projects/${projectId}/members`,
      data: { member, truncated: [] },
    },
  ]);
}
