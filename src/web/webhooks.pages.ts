/**
 * Settings → Webhooks: the subscriptions of every project the signed-in person owns, each with
 * its state (a disabled one says why) and its newest deliveries, and a button that sends a
 * delivery again. Subscriptions are made through the API (docs/webhooks.md); this page is where
 * their owner sees what happened.
 */
import type { Request, Response } from 'express';
import type { Actor } from '../kernel/actor.js';
import { ProblemError } from '../kernel/problem.js';
import type { WebhookDelivery as DeliveryDto } from '../../codegen/generated/api/types.gen.js';
import { WebhookSubscription } from '../webhooks/webhook.entity.js';
import { listWebhookDeliveries, redeliverWebhook } from '../webhooks/webhooks.service.js';
import { presentSubscription } from '../webhooks/webhooks.presenter.js';
import { field } from './web-handler.js';
import { errorList, html, page, userText, type Html, utcMinute } from './views.js';

/** The most subscriptions the page lists, and the deliveries shown for each. */
const SUBSCRIPTIONS = 50;
const DELIVERIES = 10;

type Row = { subscription: WebhookSubscription; deliveries: DeliveryDto[] };

/** The owner's subscriptions, newest first, each with its newest deliveries as the API lists them. */
async function rows(req: Request, actor: Actor): Promise<Row[]> {
  const subscriptions = await req.em.find(
    WebhookSubscription,
    { project: { owner: actor.userId } },
    { populate: ['project'], orderBy: { createdAt: 'desc' }, limit: SUBSCRIPTIONS },
  );
  return Promise.all(
    subscriptions.map(async (subscription) => {
      const { items } = await listWebhookDeliveries(req.em, actor, subscription.project.id, subscription.id, {
        limit: DELIVERIES,
      });
      return { subscription, deliveries: items };
    }),
  );
}

function outcome(delivery: DeliveryDto): Html {
  const last = delivery.log.at(-1);
  const said = last ? (last.statusCode ? `HTTP ${last.statusCode}` : (last.error ?? '')) : 'not tried yet';
  const state =
    delivery.state === 'delivered'
      ? html`<span class="status-active">delivered</span>`
      : delivery.state === 'failed'
        ? html`<span class="error">failed</span>`
        : html`pending`;
  return html`${state} <span class="hint">(${delivery.attempts} ${delivery.attempts === 1 ? 'attempt' : 'attempts'}; last: ${said})</span>`;
}

function deliveryTable(row: Row, csrf: string): Html {
  const s = row.subscription;
  if (!row.deliveries.length) return html`<p class="hint">No deliveries yet.</p>`;
  return html`<table><caption class="hint">The ${DELIVERIES} newest deliveries to ${userText(s.url)}</caption>
    <thead><tr><th scope="col">Event</th><th scope="col">Made</th><th scope="col">Outcome</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>
    ${row.deliveries.map(
      (delivery) => html`<tr>
      <td data-label="Event"><code>${delivery.eventType}</code>${delivery.manual ? html` <span class="hint">(asked for)</span>` : ''} <code class="hint">${delivery.eventId}</code></td>
      <td data-label="Made"><span class="nowrap">${utcMinute(delivery.createdAt)}</span></td>
      <td data-label="Outcome">${outcome(delivery)}</td>
      <td><form method="post" action="/settings/webhooks/redeliver">
        <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="projectId" value="${s.project.id}">
        <input type="hidden" name="webhookId" value="${s.id}"><input type="hidden" name="deliveryId" value="${delivery.id}">
        <button type="submit">Redeliver<span class="visually-hidden"> ${delivery.eventType} of ${utcMinute(delivery.createdAt)}</span></button></form></td></tr>`,
    )}</tbody></table>`;
}

function subscriptionSection(row: Row, csrf: string, i: number): Html {
  const s = row.subscription;
  const shown = presentSubscription(s);
  const status =
    shown.status === 'active'
      ? html`<span class="status-active">active</span>`
      : shown.status === 'disabled'
        ? html`<span class="error">disabled by the server</span>: ${userText(shown.disabledReason ?? '')} Turn it on again with <code>PATCH {"active": true}</code>.`
        : html`<span class="status-revoked">paused</span>`;
  return html`<section aria-labelledby="hook-${i}"><h2 id="hook-${i}">${userText(s.project.name)}: ${userText(s.url)}</h2>
    <dl class="facts">
      <dt>Status</dt><dd>${status}${s.failingSince && shown.status === 'active' ? html` <span class="soon">failing since ${utcMinute(s.failingSince)}</span>` : ''}</dd>
      <dt>Events</dt><dd>${s.events.join(', ')}</dd>
      ${s.description ? html`<dt>Description</dt><dd>${userText(s.description)}</dd>` : ''}
      <dt>Id</dt><dd><code>${s.id}</code></dd>
    </dl>
    ${deliveryTable(row, csrf)}</section>`;
}

/** The signed-in person, as the services know an owner acting on the web. */
const ownerOf = (req: Request): Actor => ({ userId: req.web!.user!.id, via: 'session', scopes: [] });

export function webhooksPages() {
  async function render(req: Request, res: Response, status = 200, errors: string[] = [], notice?: string) {
    const { user, csrf } = req.web!;
    const all = await rows(req, ownerOf(req));
    res
      .status(status)
      .type('html')
      .send(
        page(
          'Webhooks',
          user,
          csrf,
          html`<h1>Webhooks</h1>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${errorList(errors)}
      <p>Where your projects' events are pushed, and what each delivery got back. Subscriptions are made with the API
      (<code>POST /api/v1/projects/{projectId}/webhooks</code>); <a href="/docs">the API reference</a> has the events and their payloads.</p>
      ${all.length ? all.map((row, i) => subscriptionSection(row, csrf, i)) : html`<p>None of your projects has a webhook yet.</p>`}`,
        ),
      );
  }

  async function redeliver(req: Request, res: Response): Promise<void> {
    const actor = ownerOf(req);
    try {
      const d = await redeliverWebhook(
        req.em,
        actor,
        field(req.body, 'projectId'),
        field(req.body, 'webhookId'),
        field(req.body, 'deliveryId'),
      );
      await render(req, res, 200, [], `Sent again: the ${d.eventType} event is queued as a new delivery.`);
    } catch (err) {
      if (err instanceof ProblemError && err.status < 500) return render(req, res, err.status, [err.detail]);
      throw err;
    }
  }

  return { show: (req: Request, res: Response) => render(req, res), redeliver };
}
