/**
 * How a key was used, as the keys page shows it: when it was last used, through what and by
 * which client, the last addresses it came from, and an offer to revoke a key left unused.
 */
import type { ApiKey } from '../keys/api-key.entity.js';
import { html, userText, type Html, utcMinute } from './views.js';
import { CHANNEL_LABELS } from './security-log.views.js';

const DAY_MS = 86_400_000;

export type Addresses = ReadonlyMap<string, readonly { address: string; at: Date }[]>;

/** The "Last used" cell: the time, the channel and client, and the last five addresses. */
export function lastUseCell(key: ApiKey, addresses: Addresses): Html {
  if (!key.lastUsedAt) return html`<span class="nowrap">never</span>`;
  const seen = addresses.get(key.id) ?? [];
  const through = key.lastChannel ? (CHANNEL_LABELS[key.lastChannel] ?? key.lastChannel) : '';
  return html`<span class="nowrap">${utcMinute(key.lastUsedAt)}</span>${
    through || key.lastClient
      ? html`<br><span class="hint">${through}${through && key.lastClient ? ' · ' : ''}${key.lastClient ? userText(key.lastClient) : ''}</span>`
      : ''
  }${
    seen.length
      ? html`<details><summary>From ${seen.length === 1 ? '1 address' : `its last ${seen.length} addresses`}</summary>
          <ul class="addresses">${seen.map((s) => html`<li><code>${s.address}</code> <span class="hint nowrap">${utcMinute(s.at)}</span></li>`)}</ul></details>`
      : ''
  } <a class="hint" href="/settings/security-log?key=${key.id}">Its log<span class="visually-hidden"> (${userText(key.name)})</span></a>`;
}

/** Whether an active key has gone `unusedDays` without use (counted from its creation when never used). */
export const unused = (key: ApiKey, unusedDays: number, now: Date): boolean =>
  now.getTime() - (key.lastUsedAt ?? key.createdAt).getTime() >= unusedDays * DAY_MS;

/** The offer above the list: the keys nobody has used for a while, each with its revoke link. */
export function unusedOffer(keys: readonly ApiKey[], unusedDays: number): Html {
  if (keys.length === 0) return html``;
  return html`<p class="notice" role="note">Not used for ${unusedDays} days or more, so perhaps no longer needed:
      ${keys.map((k, i) => html`${i ? ', ' : ''}${userText(k.name)} (<a href="/settings/keys/${k.id}/revoke">revoke<span class="visually-hidden"> ${userText(k.name)}</span></a>)`)}.
      A key you do not use is safer revoked; you can always generate another.</p>`;
}
