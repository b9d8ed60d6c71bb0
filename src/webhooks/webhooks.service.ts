/**
 * Webhook subscriptions: a project owner's, under the project (404 to everyone else, its
 * members included). The signing secret is made here, shown once, and stored sealed.
 * Pings and redeliveries add a delivery that the relay (./worker.ts) hands to the job queue.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  WebhookDelivery as DeliveryDto,
  WebhookSecretRotated,
  WebhookSubscription as SubscriptionDto,
  WebhookSubscriptionCreate,
  WebhookSubscriptionUpdate,
} from '../../codegen/generated/api/types.gen.js';
import type { Actor, Removed } from '../kernel/actor.js';
import { conflict, notFound, ProblemError, unprocessable } from '../kernel/problem.js';
import { cursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { isUuid } from '../kernel/ids.js';
import { assertCanManageProject, lockProjectForChange, projectTransaction } from '../projects/projects.service.js';
import { Project } from '../projects/project.entity.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { WebhookAttempt, WebhookDelivery, WebhookSubscription } from './webhook.entity.js';
import { newSigningSecret, type SecretBox } from './secrets.js';
import { deliveryAddress, LOCAL_HINT, type UrlPolicy, urlFormProblem } from './url-check.js';
import { presentDelivery, presentSubscription } from './webhooks.presenter.js';
import { takeSequences } from './webhooks.queries.js';

/** The most subscriptions one project may have. */
const MAX_SUBSCRIPTIONS = 10;
/** How long a rotated-out secret keeps signing unless the owner says otherwise, and at most. */
const DEFAULT_OVERLAP_HOURS = 24;
/** The attempts shown with each delivery in the log. */
const LOG_ATTEMPTS = 20;

export type WebhookSettings = { box: SecretBox; urls: UrlPolicy };

const urlProblem = (detail: string) =>
  new ProblemError(422, 'unprocessable', 'Unprocessable content', `url ${detail}.`, {
    errors: [{ path: '/body/url', message: detail }],
  }).because('webhook-url-refused');

/** The URL checked as a delivery would check it: its form, then every address its host resolves to. */
async function checkUrl(url: string, settings: WebhookSettings): Promise<void> {
  const problem = urlFormProblem(url, settings.urls);
  if (problem) throw urlProblem(problem);
  try {
    await deliveryAddress(new URL(url), settings.urls);
  } catch (err) {
    throw urlProblem(
      `is not allowed: ${(err as Error).message}. Webhooks go to the public internet only. ${LOCAL_HINT}`,
    );
  }
}

/**
 * The project's owner, or 404: a project's webhooks (their URLs, their delivery logs) are its
 * owner's alone, and to anyone else, a member included, there are none.
 */
async function assertOwnsWebhooks(em: EntityManager, actor: Actor, projectId: string): Promise<void> {
  try {
    await assertCanManageProject(em, actor, projectId);
  } catch (err) {
    if (err instanceof ProblemError && err.status === 403)
      throw notFound(`Project ${projectId} has no webhooks you can see: they are its owner's.`);
    throw err;
  }
}

async function subscriptionOf(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<WebhookSubscription> {
  await assertOwnsWebhooks(em, actor, projectId);
  const found = isUuid(webhookId) ? await em.findOne(WebhookSubscription, { id: webhookId, project: projectId }) : null;
  if (!found) throw notFound(`Project ${projectId} has no webhook with id ${webhookId}.`);
  return found;
}

export async function listWebhooks(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<SubscriptionDto>> {
  await assertOwnsWebhooks(em, actor, projectId);
  const list = cursorList('webhooks', projectId);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const rows = await em.find(
    WebhookSubscription,
    { project: projectId, ...(after ? { id: { $lt: after.id } } : {}) },
    { orderBy: { id: 'desc' }, limit: query.limit + 1 },
  );
  return pageOf(rows, query.limit, (s) => presentSubscription(s), idOf, list);
}

export async function getWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<SubscriptionDto> {
  return presentSubscription(await subscriptionOf(em, actor, projectId, webhookId));
}

export async function createWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  input: WebhookSubscriptionCreate,
  settings: WebhookSettings,
): Promise<SubscriptionDto & { secret: string }> {
  await assertOwnsWebhooks(em, actor, projectId);
  await checkUrl(input.url, settings);
  const secret = newSigningSecret();
  return projectTransaction(em, projectId, async (tem) => {
    // Counted under the project's row lock: two creates at once cannot both take the last place.
    await lockProjectForChange(tem, projectId);
    const count = await tem.count(WebhookSubscription, { project: projectId });
    if (count >= MAX_SUBSCRIPTIONS)
      throw unprocessable(
        `Project ${projectId} has ${count} webhooks, the most a project may have. Delete one, or give one more events.`,
      ).because('webhook-limit-reached');
    const subscription = tem.create(WebhookSubscription, {
      project: tem.getReference(Project, projectId),
      url: input.url,
      events: [...input.events],
      active: input.active ?? true,
      description: input.description?.trim() ?? '',
      secret: settings.box.seal(secret),
    });
    await tem.flush();
    return { ...presentSubscription(subscription), secret };
  });
}

export async function updateWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
  input: WebhookSubscriptionUpdate,
  settings: WebhookSettings,
): Promise<SubscriptionDto> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  if (input.url !== undefined) {
    await checkUrl(input.url, settings);
    subscription.url = input.url;
  }
  if (input.events !== undefined) subscription.events = [...input.events];
  if (input.description !== undefined) subscription.description = input.description.trim();
  if (input.active !== undefined) {
    subscription.active = input.active;
    // Turned on again by its owner: a fresh start, whatever the server had concluded.
    if (input.active) {
      subscription.disabledAt = null;
      subscription.disabledReason = null;
      subscription.failingSince = null;
    }
  }
  await em.flush();
  return presentSubscription(subscription);
}

export async function deleteWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<Removed> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  await em.nativeDelete(WebhookSubscription, { id: subscription.id }); // deliveries and attempts cascade
  return { name: subscription.description || subscription.url };
}

export async function rotateWebhookSecret(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
  overlapHours: number | undefined,
  settings: WebhookSettings,
): Promise<WebhookSecretRotated> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  const hours = overlapHours ?? DEFAULT_OVERLAP_HOURS;
  const secret = newSigningSecret();
  const until = hours > 0 ? new Date(Date.now() + hours * 3_600_000) : null;
  subscription.previousSecret = until ? subscription.secret : null;
  subscription.previousSecretUntil = until;
  subscription.secret = settings.box.seal(secret);
  await em.flush();
  return { secret, previousSecretValidUntil: until?.toISOString() ?? null };
}

/** Deliveries asked for (pings, redeliveries) that may wait at once per subscription. */
const MAX_PENDING_MANUAL = 10;

/**
 * Adds a delivery of `event` to `subscription`, asked for by its owner; the relay queues it. A
 * redelivery keeps the number its event has for the subscription (`sequence`); a ping takes the next.
 */
async function manualDelivery(
  em: EntityManager,
  subscription: WebhookSubscription,
  event: WebhookEvent,
  sequence?: number,
): Promise<DeliveryDto> {
  const waiting = await em.count(WebhookDelivery, { subscription: subscription.id, manual: true, state: 'pending' });
  if (waiting >= MAX_PENDING_MANUAL)
    throw conflict(
      `Webhook ${subscription.id} has ${waiting} deliveries you asked for still waiting to be sent; ask again once they are (see its delivery log).`,
    ).because('redeliveries-waiting');
  const delivery = em.create(WebhookDelivery, {
    subscription,
    event,
    manual: true,
    sequence: sequence ?? (await takeSequences(em, subscription.id, 1)),
  });
  await em.flush();
  return presentDelivery(delivery, []);
}

export async function pingWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
): Promise<DeliveryDto> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  return em.transactional(async (tem) => {
    // Already dispatched: a ping goes to this subscription alone, not to every matching one.
    const event = tem.create(WebhookEvent, {
      projectId,
      type: 'ping',
      data: JSON.stringify({
        subscriptionId: subscription.id,
        message: "A ping from Shipyard: this endpoint receives the project's events.",
      }),
      dispatchedAt: new Date(),
    });
    return manualDelivery(tem, tem.merge(subscription), event);
  });
}

export async function redeliverWebhook(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryDto> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  const delivery = isUuid(deliveryId)
    ? await em.findOne(WebhookDelivery, { id: deliveryId, subscription: subscription.id }, { populate: ['event'] })
    : null;
  if (!delivery) throw notFound(`Webhook ${webhookId} has no delivery with id ${deliveryId}.`);
  return manualDelivery(em, subscription, delivery.event, delivery.sequence);
}

export async function listWebhookDeliveries(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  webhookId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<DeliveryDto>> {
  const subscription = await subscriptionOf(em, actor, projectId, webhookId);
  const list = cursorList('webhook-deliveries', subscription.id);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const rows = await em.find(
    WebhookDelivery,
    { subscription: subscription.id, ...(after ? { id: { $lt: after.id } } : {}) },
    { orderBy: { id: 'desc' }, limit: query.limit + 1, populate: ['event'] },
  );
  const attempts = rows.length
    ? await em.find(WebhookAttempt, { delivery: { $in: rows.map((r) => r.id) } }, { orderBy: { at: 'asc' } })
    : [];
  const byDelivery = Map.groupBy(attempts, (a) => a.delivery.id);
  return pageOf(
    rows,
    query.limit,
    (d) => presentDelivery(d, (byDelivery.get(d.id) ?? []).slice(-LOG_ATTEMPTS)),
    idOf,
    list,
  );
}

/** How long events and their delivery logs are kept. */
const HISTORY_DAYS = 30;

/** Retries end about 3 days after a delivery is made: one still pending a day later lost its job (its last run crashed). */
const STRANDED_DAYS = 4;

/**
 * Marks deliveries stranded in `pending` as failed, and removes events older than HISTORY_DAYS
 * with their deliveries and attempts (long settled). Returns how many rows it changed.
 */
export async function sweepWebhookHistory(em: EntityManager): Promise<number> {
  const stranded = await em.nativeUpdate(
    WebhookDelivery,
    { state: 'pending', createdAt: { $lt: new Date(Date.now() - STRANDED_DAYS * 86_400_000) } },
    { state: 'failed' },
  );
  const before = new Date(Date.now() - HISTORY_DAYS * 86_400_000);
  return stranded + (await em.nativeDelete(WebhookEvent, { occurredAt: { $lt: before }, dispatchedAt: { $ne: null } }));
}
