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
import { isUuid } from '../kernel/ids.js';
import {
  everySecurityEvent,
  isSecurityEventKind,
  listSecurityEvents,
  type SecurityLogFilter,
} from '../security-log/security-log.service.js';
import { presentSecurityEvent } from '../security-log/security-log.presenter.js';
import { html, page } from './views.js';
import { filterForm, securityLogRow } from './security-log.views.js';

const PAGE = 50;

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
            <tbody>${items.map(securityLogRow)}</tbody></table>`
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
    const lines = async function* () {
      for await (const row of everySecurityEvent(req.em, user.id))
        yield `${JSON.stringify(presentSecurityEvent(row))}\n`;
    };
    await pipeline(Readable.from(lines()), res).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    });
  }

  return { show, download };
}
