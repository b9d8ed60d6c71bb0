/**
 * Settings → Security log: what happened on the signed-in person's account — keys made,
 * regenerated, revoked and expired, sign-ins, and every change made with a key (which key,
 * through what, from where) — newest first, filtered by key and by kind, paged, and downloadable
 * as JSON Lines. Only the account's owner sees it; it holds no secret and no request body.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { listKeys } from '../keys/keys.service.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { isUuid } from '../kernel/ids.js';
import type { SecurityEvent } from '../security-log/security-event.entity.js';
import {
  exportSecurityEvents,
  isSecurityEventKind,
  listSecurityEvents,
  SECURITY_EVENT_KINDS,
  type SecurityEventKind,
  type SecurityLogFilter,
  UNFAMILIAR_KINDS,
} from '../security-log/security-log.service.js';
import { html, page, raw, userText, type Html } from './views.js';

const PAGE = 50;

const KIND_LABELS: Record<SecurityEventKind, string> = {
  'key.created': 'Key created',
  'key.regenerated': 'Key regenerated',
  'key.revoked': 'Key revoked',
  'key.expired': 'Key expired',
  'key.first_use': 'Key used for the first time',
  'key.new_address': 'Key used from a new address',
  'key.new_client': 'Key used by a new client',
  'key.write': 'Change made with a key',
  signin: 'Signed in',
  'signin.failed': 'Failed sign-in',
  signout: 'Signed out',
  'password.changed': 'Password changed',
  'github.linked': 'GitHub account linked',
};
export const CHANNEL_LABELS: Record<string, string> = {
  web: 'web',
  cli: 'operator CLI',
  oauth: 'OAuth sign-in',
  rest: 'REST API',
  mcp: 'MCP',
};

const minute = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const orDash = (v: string | null | undefined): Html => (v ? userText(v) : raw('<span class="hint">—</span>'));

/** The filter as the query gives it; anything else (an unknown kind, not an id) is no filter. */
function filterOf(req: Request): SecurityLogFilter {
  const q = req.query as Record<string, unknown>;
  return {
    keyId: typeof q.key === 'string' && isUuid(q.key) ? q.key : undefined,
    kind: isSecurityEventKind(q.kind) ? q.kind : undefined,
    before: typeof q.before === 'string' && isUuid(q.before) ? q.before : undefined,
  };
}

const query = (filter: SecurityLogFilter) => {
  const params = new URLSearchParams();
  if (filter.keyId) params.set('key', filter.keyId);
  if (filter.kind) params.set('kind', filter.kind);
  if (filter.before) params.set('before', filter.before);
  const text = params.toString();
  return text ? `?${text}` : '';
};

function row(event: SecurityEvent): Html {
  const kind = event.kind as SecurityEventKind;
  const unfamiliar = UNFAMILIAR_KINDS.has(kind);
  const what = KIND_LABELS[kind] ?? kind;
  return html`<tr${unfamiliar ? raw(' class="unfamiliar"') : ''}>
      <td data-label="When"><span class="nowrap">${minute(event.occurredAt)}</span></td>
      <td data-label="What">${unfamiliar ? html`<strong>New:</strong> ` : ''}${what}${event.operation ? html` <span class="hint">(${event.operation})</span>` : ''}</td>
      <td data-label="Key">${orDash(event.keyName)}</td>
      <td data-label="Through">${event.channel ? (CHANNEL_LABELS[event.channel] ?? event.channel) : '—'}</td>
      <td data-label="Client">${orDash(event.client)}</td>
      <td data-label="From">${event.address ? html`<code>${event.address}</code>` : orDash(null)}</td>
      <td data-label="Resource">${event.resource ? html`<code class="wrap">${event.resource}</code>` : orDash(null)}</td>
    </tr>`;
}

function filterForm(keys: ApiKey[], filter: SecurityLogFilter): Html {
  return html`<form method="get" action="/settings/security-log" class="filters">
      <label for="log-key">Key</label>
      <select id="log-key" name="key">
        <option value="">All keys</option>
        ${keys.map((k) => html`<option value="${k.id}" ${filter.keyId === k.id ? raw('selected') : ''}>${k.name} (…${k.last4})</option>`)}
      </select>
      <label for="log-kind">What</label>
      <select id="log-kind" name="kind">
        <option value="">Everything</option>
        ${SECURITY_EVENT_KINDS.map((k) => html`<option value="${k}" ${filter.kind === k ? raw('selected') : ''}>${KIND_LABELS[k]}</option>`)}
      </select>
      <button type="submit">Show</button>
    </form>`;
}

export function securityLogPages(keepDays: number) {
  async function show(req: Request, res: Response): Promise<void> {
    const user = req.web!.user!;
    const filter = filterOf(req);
    const [keys, { items, next }] = await Promise.all([
      listKeys(req.em, user.id),
      listSecurityEvents(req.em, user.id, filter, PAGE),
    ]);
    const body = html`<h1>Settings → Security log</h1>
      <p>What happened on your account in the last ${keepDays} days: keys made, regenerated, revoked and expired;
        sign-ins; and every change made with a key, with the key, the way it came (REST API or MCP), the client and the
        address. A key used from an address or by a client it never used before is marked <strong>New</strong>.
        Secrets and what was sent are never kept.</p>
      ${filterForm(keys, filter)}
      <p><a href="/settings/security-log.jsonl" download>Download the whole log (JSON Lines)</a></p>
      ${
        items.length
          ? html`<table><caption class="hint">${filter.before ? 'Older entries' : 'Newest first'}${filter.keyId || filter.kind ? ', filtered' : ''}</caption>
            <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Key</th><th scope="col">Through</th><th scope="col">Client</th><th scope="col">From</th><th scope="col">Resource</th></tr></thead>
            <tbody>${items.map(row)}</tbody></table>`
          : html`<p>Nothing ${filter.keyId || filter.kind ? 'matches this filter' : 'is recorded yet'}.</p>`
      }
      ${
        filter.before || next
          ? html`<nav aria-label="Pages of the log"><p>${
              filter.before
                ? html`<a href="/settings/security-log${query({ ...filter, before: undefined })}">Newest entries</a>`
                : ''
            }${filter.before && next ? ' · ' : ''}${
              next ? html`<a href="/settings/security-log${query({ ...filter, before: next })}">Older entries</a>` : ''
            }</p></nav>`
          : ''
      }`;
    res.type('html').send(page('Security log', user, req.web!.csrf, body));
  }

  /** The whole log, oldest first, one JSON object a line, as a download. */
  async function download(req: Request, res: Response): Promise<void> {
    const user = req.web!.user!;
    res
      .type('application/x-ndjson')
      .set(
        'Content-Disposition',
        `attachment; filename="shipyard-security-log-${new Date().toISOString().slice(0, 10)}.jsonl"`,
      )
      .set('Cache-Control', 'no-store');
    // At the reader's pace: a page of rows at a time, and nothing more once the reader is gone.
    await pipeline(Readable.from(exportSecurityEvents(req.em, user.id)), res).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    });
  }

  return { show, download };
}
