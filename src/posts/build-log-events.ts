/** Build logs' webhook events (src/webhooks/events.ts), recorded in the transaction of the change. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordEvent, shortened } from '../outbox/events.js';
import { type PostFields, presentPost } from './posts.presenter.js';

export function recordBuildLogEvent(
  tem: EntityManager,
  type: 'build_log.created' | 'build_log.updated' | 'build_log.deleted',
  post: PostFields,
): void {
  const presented = presentPost(post);
  if (presented.kind !== 'build_log' || !presented.projectId) return;
  const { resource, truncated } = shortened(presented, ['body']);
  recordEvent(tem, {
    type,
    projectId: presented.projectId,
    path: `/posts/${presented.id}`,
    data: { buildLog: resource, truncated },
  });
}
