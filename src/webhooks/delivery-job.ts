/**
 * What one delivery job does (./worker.ts queues them): read the delivery, its event and its
 * subscription; sign the event and POST it (./deliver.ts); write the attempt to the log; settle
 * the subscription's health; and tell pg-boss whether to try again (by throwing).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { JobWithMetadata } from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../kernel/logger.js';
import { WebhookSubscription } from './webhook.entity.js';
import { deliveryToTry, giveUpDelivery, recordAttempt } from './webhooks.queries.js';
import type { WebhookSettings } from './webhooks.service.js';
import { deliveryAddress, urlFormProblem } from './url-check.js';
import { postEvent, signedHeaders, type AttemptOutcome } from './deliver.js';
import { continuing, inSpan, measure, SpanKind, SpanStatusCode } from '../telemetry/telemetry.js';

export type RetryPolicy = {
  /** Retries after the first attempt. */
  limit: number;
  /** The first retry's delay; each next one doubles, with jitter, up to maxDelaySeconds. */
  delaySeconds: number;
  maxDelaySeconds: number;
  /** A subscription whose deliveries have all failed for this long is disabled. */
  disableAfterMs: number;
};

/** 20 retries from 30 s doubling to 6 h: the last about 3 days after the first attempt. */
export const DEFAULT_RETRY: RetryPolicy = {
  limit: 20,
  delaySeconds: 30,
  maxDelaySeconds: 6 * 3600,
  disableAfterMs: 3 * 24 * 3_600_000,
};

/** What a delivery job works with: the worker's settings, its retry policy and its signers. */
export type DeliveryContext = {
  orm: MikroORM;
  log: Logger;
  settings: WebhookSettings;
  /** The API's public base: each event links to its resource there. */
  apiUrl: string;
  attemptTimeoutMs?: number;
  retry: RetryPolicy;
  signer: (sealed: string) => Webhook;
  /**
   * Sends at once what a subscription has waiting (but `except`), in the order of its sequence:
   * called when its endpoint answers again after failing, so a backlog does not wait out each
   * delivery's own back-off.
   */
  catchUp?: (subscriptionId: string, except: string) => Promise<void>;
};

/** Text a receiver sent, as a text column can hold it: NUL is the one character PostgreSQL refuses. */
const storable = (text: string | null, max: number): string | null =>
  text === null ? null : text.replaceAll('\0', '\uFFFD').slice(0, max);

/** A delivery as its attempt reads it (./webhooks.queries.ts). */
type DeliveryToTry = Awaited<ReturnType<typeof deliveryToTry>>[number];

/** The body a delivery sends: the event's envelope, its data, and a link to its resource. */
function eventBody(d: DeliveryToTry, apiUrl: string): string {
  const { path, ...data } = JSON.parse(d.data) as { path?: string } & Record<string, unknown>;
  return JSON.stringify({
    id: d.eventId,
    type: d.type,
    occurredAt: d.occurredAt,
    projectId: d.projectId,
    sequence: Number(d.sequence),
    data: path ? { ...data, url: `${apiUrl}${path}` } : data,
  });
}

/** The most signers a worker keeps opened (one or two per subscription it delivers to). */
const SIGNERS_MAX = 1000;

/**
 * Signers by sealed secret, each opened once: opening a secret (AES-GCM under the server's key)
 * and the library's decoding of it cost more than a signature, and a busy subscription signs
 * many times a second. A rotation seals a new text, so a replaced secret is never used again,
 * only evicted (the least recently used goes first).
 */
export function signerCache(box: WebhookSettings['box']): (sealed: string) => Webhook {
  const signers = new Map<string, Webhook>();
  return (sealed) => {
    let signer = signers.get(sealed);
    if (signer) signers.delete(sealed);
    else {
      try {
        signer = new Webhook(box.open(sealed));
      } catch {
        throw new Error(
          "its signing secret cannot be read: this server's SECRET_KEY is not the one it was sealed with (every instance must share one)",
        );
      }
      if (signers.size >= SIGNERS_MAX) signers.delete(signers.keys().next().value!);
    }
    signers.set(sealed, signer);
    return signer;
  };
}

/** The signers now: the current secret's, and the previous one's while its overlap lasts. */
function signersNow(d: DeliveryToTry, signer: (sealed: string) => Webhook, now: Date): Webhook[] {
  const signers = [signer(d.secret)];
  if (d.previousSecret && d.previousSecretUntil && Date.parse(d.previousSecretUntil) > now.getTime())
    signers.push(signer(d.previousSecret));
  return signers;
}

/**
 * One attempt at one delivery, written to its log. Throws when it should be tried again, so that
 * pg-boss schedules the retry; returns when it is done (delivered, or given up). Whether a retry
 * is left is the job's own count and limit, as pg-boss set them when it was queued: a worker
 * started with another policy (an instance mid-upgrade) does not leave a delivery pending when
 * its job has no retry left. (A crash during the last attempt would; pg-boss then hands the job
 * to the given-up queue of ./worker.ts, which settles it.)
 */
export async function deliver(ctx: DeliveryContext, job: JobWithMetadata<{ deliveryId: string }>): Promise<void> {
  const em = ctx.orm.em.fork();
  const [delivery] = await deliveryToTry(em, { deliveryId: job.data.deliveryId });
  // Gone with its subscription, or settled by an earlier run of this job.
  if (delivery?.state !== 'pending') return;
  if (!delivery.active && !delivery.manual) {
    measure.webhookDeliveries.add(1, { 'shipyard.outcome': 'given_up' });
    return giveUpDelivery(em, delivery.id);
  }
  // A span of the trace whose change recorded the event: the write, and each try to deliver it.
  // What went wrong is the delivery log's (it may name the receiver's URL), not the span's.
  const outcome = await inSpan(
    'webhook deliver',
    {
      kind: SpanKind.CONSUMER,
      parent: continuing(delivery.traceParent),
      attributes: { 'shipyard.webhook.event_type': delivery.type, 'shipyard.webhook.attempt': job.retryCount + 1 },
    },
    async (span) => {
      const outcome = await tryOnce(ctx, em, job, delivery);
      const kind = typeof outcome === 'string' ? outcome : 'failed';
      measure.webhookDeliveries.add(1, { 'shipyard.outcome': kind });
      if (kind === 'delivered') measure.webhookLatency.record((Date.now() - Date.parse(delivery.occurredAt)) / 1000);
      else span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      return outcome;
    },
  );
  // pg-boss tries it again later.
  if (typeof outcome !== 'string') throw new Error(`delivery ${delivery.id}: ${outcome.failed}`);
}

/** One attempt, written to its log, and what came of it: delivered, failed (to be tried again) or given up. */
async function tryOnce(
  ctx: DeliveryContext,
  em: EntityManager,
  job: JobWithMetadata<{ deliveryId: string }>,
  delivery: DeliveryToTry,
): Promise<'delivered' | 'given_up' | { failed: string | null }> {
  const at = new Date();
  const started = performance.now();
  const outcome = await attempt(delivery, eventBody(delivery, ctx.apiUrl), ctx, at);
  await recordAttempt(em, delivery.id, {
    at,
    statusCode: outcome.statusCode,
    durationMs: Math.round(performance.now() - started),
    error: storable(outcome.error, 300),
    responseExcerpt: storable(outcome.excerpt, 1024),
    delivered: outcome.ok,
  });
  // A success on a healthy subscription changes nothing; anything else is decided in the database.
  const active =
    outcome.ok && !delivery.failing
      ? true
      : await settleSubscription(em, delivery.subscriptionId, outcome, at, ctx.retry, ctx.log);
  if (outcome.ok) {
    if (delivery.failing) await ctx.catchUp?.(delivery.subscriptionId, delivery.id);
    return 'delivered';
  }
  if (job.retryCount >= job.retryLimit || (!active && !delivery.manual)) {
    await giveUpDelivery(em, delivery.id);
    return 'given_up';
  }
  return { failed: outcome.error };
}

const duration = (ms: number) =>
  ms >= 86_400_000 ? `${Math.round(ms / 86_400_000)} days` : `${Math.round(ms / 1000)} seconds`;

/**
 * The subscription's health after an attempt, decided by the database on its current row (a
 * delivery beside this one may just have succeeded, or its owner turned it on again): a success
 * clears `failingSince`; a failure sets it if unset, and disables the subscription once it is
 * older than the limit. Returns whether the subscription is still active.
 */
async function settleSubscription(
  em: EntityManager,
  id: string,
  outcome: AttemptOutcome,
  at: Date,
  retry: RetryPolicy,
  log: Logger,
): Promise<boolean> {
  if (outcome.ok) {
    await em.nativeUpdate(WebhookSubscription, { id, failingSince: { $ne: null } }, { failingSince: null });
    return true;
  }
  await em.nativeUpdate(WebhookSubscription, { id, failingSince: null }, { failingSince: at });
  const disabled = await em.nativeUpdate(
    WebhookSubscription,
    { id, active: true, failingSince: { $lte: new Date(at.getTime() - retry.disableAfterMs) } },
    {
      active: false,
      disabledAt: at,
      disabledReason:
        `Every delivery failed for ${duration(retry.disableAfterMs)}; the last one: ${outcome.error}`.slice(0, 300),
    },
  );
  if (disabled) log.info('webhook subscription disabled', { subscriptionId: id });
  const now = await em.findOne(WebhookSubscription, id, { fields: ['active'], refresh: true });
  return now?.active ?? false;
}

async function attempt(
  d: DeliveryToTry,
  body: string,
  { settings, attemptTimeoutMs, signer }: DeliveryContext,
  now: Date,
): Promise<AttemptOutcome> {
  try {
    const problem = urlFormProblem(d.url, settings.urls);
    if (problem) throw new Error(`the URL ${problem}`);
    const url = new URL(d.url);
    const address = await deliveryAddress(url, settings.urls);
    return await postEvent(
      url,
      address,
      body,
      signedHeaders(d.eventId, body, signersNow(d, signer, now)),
      attemptTimeoutMs,
    );
  } catch (err) {
    return { ok: false, statusCode: null, error: `not sent: ${(err as Error).message}`, excerpt: null };
  }
}
