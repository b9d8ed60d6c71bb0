/** Build logs' webhook events (src/outbox/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvents, shortened } from '../outbox/events.js';
import type { Post as PostDto } from '../../codegen/generated/api/types.gen.js';
import type { HealthChange } from '../projects/pulse.js';

/** The event of a change to a build log, from its answer (presented once by the change's service). */
export async function recordBuildLogEvent(
  tem: EntityManager,
  type: 'build_log.created' | 'build_log.updated' | 'build_log.deleted',
  presented: PostDto,
  healthChange: HealthChange | null = null,
): Promise<void> {
  // A hidden build log is its author's alone: its owner's receivers hear nothing of it.
  if (presented.kind !== 'build_log' || !presented.projectId || presented.hidden) return;
  const { resource, truncated } = shortened(presented, ['body']);
  await recordEvents(tem, [
    {
      type,
      projectId: presented.projectId,
      path: `/posts/${presented.id}`,
      data: { buildLog: resource, healthChange, truncated },
    },
  ]);
}
