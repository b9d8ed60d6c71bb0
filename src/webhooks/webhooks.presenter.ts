import type {
  WebhookDelivery as DeliveryDto,
  WebhookSubscription as SubscriptionDto,
} from '../../codegen/generated/api/types.gen.js';
import type { WebhookAttempt, WebhookDelivery, WebhookSubscription } from './webhook.entity.js';

export function presentSubscription(s: WebhookSubscription, now = new Date()): SubscriptionDto {
  return {
    id: s.id,
    projectId: s.project.id,
    url: s.url,
    events: s.events as SubscriptionDto['events'],
    active: s.active,
    description: s.description,
    status: s.active ? 'active' : s.disabledAt ? 'disabled' : 'paused',
    disabledReason: !s.active && s.disabledAt ? (s.disabledReason ?? null) : null,
    failingSince: s.failingSince?.toISOString() ?? null,
    previousSecretValidUntil:
      s.previousSecret && s.previousSecretUntil && s.previousSecretUntil > now
        ? s.previousSecretUntil.toISOString()
        : null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function presentDelivery(d: WebhookDelivery, attempts: readonly WebhookAttempt[]): DeliveryDto {
  return {
    id: d.id,
    subscriptionId: d.subscription.id,
    eventId: d.event.id,
    eventType: d.event.type as DeliveryDto['eventType'],
    state: d.state,
    manual: d.manual,
    attempts: d.attempts,
    createdAt: d.createdAt.toISOString(),
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    log: attempts.map((a) => ({
      at: a.at.toISOString(),
      statusCode: a.statusCode ?? null,
      durationMs: a.durationMs,
      error: a.error ?? null,
      responseExcerpt: a.responseExcerpt ?? null,
    })),
  };
}
