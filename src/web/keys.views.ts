/**
 * The HTML of Settings → Manage API keys: the list (active keys, then the inactive ones), the
 * create form on its own page, the token shown once, the revoke confirmation.
 */
import { calendarDaysUntil, inDays } from '../kernel/days.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { keyStatus, lastExpiryDay, regeneratedLifetimeDays } from '../keys/keys.service.js';
import { MAX_KEY_DAYS } from '../kernel/limits.js';
import { SCOPE_IDS } from '../kernel/scopes.js';
import { MCP_SCOPES } from '../kernel/contract.js';
import type { ScopeEntry } from '../kernel/contract.js';
import { lastUseCell, unused, unusedOffer, type Addresses } from './key-use.views.js';
import { errorList, fieldError, html, raw, userText, type Html, utcMinute } from './views.js';

export const EXPIRY_CHOICES = [
  ['7', '7 days'],
  ['30', '30 days'],
  ['60', '60 days'],
  ['90', '90 days'],
  ['365', 'One year'],
  ['date', 'On a date…'],
] as const;
/** An active key this close to its expiry is listed first and says when it expires. */
const SOON_DAYS = 7;
/** ... and this close, in the warning colour. */
const URGENT_DAYS = 3;
const DAY_MS = 86_400_000;

const day = (d: Date | null | undefined) => (d ? d.toISOString().slice(0, 10) : '—');
const dateTime = (d: Date | null | undefined) => (d ? utcMinute(d) : 'never');
/** A date or time that never wraps in the middle. */
const when = (text: string) => html`<span class="nowrap">${text}</span>`;

export type Form = { name?: string; scopes?: string[]; expiry?: string; expiresOn?: string };

/** The scopes by area, in the contract's order: read and write side by side. */
const AREAS: readonly { prefix: string; legend: string }[] = [
  { prefix: 'content', legend: 'Posts and comments' },
  { prefix: 'jobs', legend: 'Jobs' },
  { prefix: 'profile', legend: 'Profiles' },
  { prefix: 'projects', legend: 'Projects, roadmaps and build logs' },
  { prefix: 'github', legend: 'GitHub Insight' },
  { prefix: 'radar', legend: 'Opportunity radar' },
];

/** Starting points for the form (`?preset=…`), without JavaScript. */
export const PRESETS: Record<string, { label: string; name: string; scopes: readonly string[] }> = {
  mcp: { label: 'MCP (roadmap and build logs)', name: 'MCP', scopes: MCP_SCOPES },
  read: { label: 'Read only', name: 'Read only', scopes: SCOPE_IDS.filter((s) => s.endsWith('.read')) },
};
export type Label = (scopeId: string) => string;

const scopeList = (key: ApiKey, label: Label) => key.scopes.map((s, i) => html`${i ? ', ' : ''}${label(s)}`);

export function keysList(
  keys: ApiKey[],
  label: Label,
  notice: string | undefined,
  use: { addresses: Addresses; unusedDays: number },
  now = new Date(),
): Html {
  const daysLeft = (k: ApiKey) => calendarDaysUntil(k.expiresAt, now);
  // The keys about to stop working first (soonest first), then the others, newest first.
  const active = keys
    .filter((k) => keyStatus(k, now) === 'active')
    .map((k, i) => ({ k, i, soon: daysLeft(k) <= SOON_DAYS }))
    .sort((a, b) =>
      a.soon === b.soon ? (a.soon ? a.k.expiresAt.getTime() - b.k.expiresAt.getTime() : a.i - b.i) : a.soon ? -1 : 1,
    )
    .map((x) => x.k);
  const inactive = keys.filter((k) => keyStatus(k, now) !== 'active');
  return html`
      <div class="page-head"><h1>Settings → Manage API keys</h1>
        <a class="button" href="/settings/keys/new">Generate new key</a></div>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
      ${unusedOffer(
        active.filter((k) => unused(k, use.unusedDays, now)),
        use.unusedDays,
      )}
      <p>A key calls the API as you, with only the scopes you give it, until it expires or you revoke it.
        Send it as <code>Authorization: Bearer shipyard_pat_…</code>. See the <a href="/docs">API reference</a>.</p>
      <section aria-labelledby="keys-heading"><h2 id="keys-heading">Active keys</h2>
      ${
        active.length
          ? html`<table><caption class="hint">${active.length} active key${active.length === 1 ? '' : 's'}: those expiring within ${SOON_DAYS} days first, then the newest</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Ends with</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
            <tbody>${active.map((key) => activeRow(key, label, use.addresses, now))}</tbody></table>`
          : html`<p>No active keys. <a href="/settings/keys/new">Generate one</a> to call the API.</p>`
      }
      </section>
      ${
        inactive.length
          ? html`<section aria-labelledby="inactive-heading"><h2 id="inactive-heading">Inactive keys</h2>
            <p class="hint">Revoked and expired keys are refused; they stay listed so you can tell what a key was.</p>
            <table><thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Ended</th><th scope="col">Last used</th><th scope="col">Ends with</th></tr></thead>
            <tbody>${inactive.map((key) => inactiveRow(key, label, use.addresses, now))}</tbody></table></section>`
          : ''
      }`;
}

/** A key's name, and for a key an app was given through OAuth sign-in, that it was. */
const keyName = (key: ApiKey) =>
  key.oauthClientId
    ? html`${userText(key.name)} <span class="hint">connected through OAuth</span>`
    : userText(key.name);

function activeRow(key: ApiKey, label: Label, addresses: Addresses, now: Date): Html {
  const daysLeft = calendarDaysUntil(key.expiresAt, now);
  const left = inDays(daysLeft);
  const soon =
    daysLeft <= URGENT_DAYS
      ? html` <span class="soon">expires ${left}</span>`
      : daysLeft <= SOON_DAYS
        ? html` <span class="hint">expires ${left}</span>`
        : '';
  return html`<tr>
      <td data-label="Name">${keyName(key)}</td>
      <td data-label="Scopes">${scopeList(key, label)}</td>
      <td data-label="Created">${when(day(key.createdAt))}</td>
      <td data-label="Expires">${when(day(key.expiresAt))}${soon}</td>
      <td data-label="Last used">${lastUseCell(key, addresses)}</td>
      <td data-label="Ends with"><code>…${key.last4}</code></td>
      <td>${
        key.replacedAt
          ? html`<span class="hint">regenerated; stops ${when(dateTime(key.expiresAt))}</span> · `
          : key.oauthClientId
            ? ''
            : html`<a href="/settings/keys/${key.id}/regenerate">Regenerate<span class="visually-hidden"> ${userText(key.name)}</span></a> · `
      }<a href="/settings/keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${userText(key.name)}</span></a></td>
    </tr>`;
}

function inactiveRow(key: ApiKey, label: Label, addresses: Addresses, now: Date): Html {
  const status = keyStatus(key, now);
  const ended =
    status === 'revoked' ? html`revoked ${when(dateTime(key.revokedAt))}` : html`expired ${when(day(key.expiresAt))}`;
  return html`<tr>
      <td data-label="Name">${keyName(key)}</td>
      <td data-label="Scopes">${scopeList(key, label)}</td>
      <td data-label="Created">${when(day(key.createdAt))}</td>
      <td data-label="Ended"><span class="status-${status}">${ended}</span></td>
      <td data-label="Last used">${lastUseCell(key, addresses)}</td>
      <td data-label="Ends with"><code>…${key.last4}</code></td>
    </tr>`;
}

/** What the chosen expiry gives, in words (the form's script keeps it current as the choice changes). */
function expiryPreview(form: Form, now: Date): string {
  if (form.expiry === 'date')
    return form.expiresOn ? `The key expires at the end of ${form.expiresOn} (UTC).` : 'Choose the date below.';
  const days = Number(form.expiry ?? '30');
  if (!EXPIRY_CHOICES.some(([v]) => v === String(days))) return 'Choose when the key expires.';
  return `The key expires on ${day(new Date(now.getTime() + days * DAY_MS))} (UTC).`;
}

export function createForm(
  scopes: readonly ScopeEntry[],
  csrf: string,
  form: Form,
  errors: string[],
  maxDays = MAX_KEY_DAYS,
): Html {
  const now = new Date();
  const chosen = new Set(form.scopes ?? []);
  const min = new Date(now.getTime() + DAY_MS).toISOString().slice(0, 10);
  const name = fieldError(errors, 'Name', 'key-name', 'key-name-hint');
  const scopesError = fieldError(errors, 'Scopes', 'key-scopes');
  const expires = fieldError(errors, 'Expires', 'key-expiry', 'expiry-preview');
  const date = fieldError(errors, 'Expiry date', 'key-expires-on');
  return html`<h1>Generate a new API key</h1>
      ${errorList(errors)}
      <form method="post" action="/settings/keys" novalidate>
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="key-name">Name</label>
        <input type="text" id="key-name" name="name" maxlength="100" required value="${form.name ?? ''}" ${name.attrs}>
        ${name.message}
        <p class="hint" id="key-name-hint">What the key is for, e.g. "laptop" or "CI".</p>
        <fieldset ${scopesError.attrs}><legend>Scopes (what the key may do; nothing implies anything else)</legend>
          ${scopesError.message}
          <p class="hint">Start from a preset:
            ${Object.entries(PRESETS).map(([id, p], i) => html`${i ? ' · ' : ''}<a href="/settings/keys/new?preset=${id}">${p.label}</a>`)}</p>
          ${AREAS.map(
            ({ prefix, legend }) => html`<fieldset class="scope-area"><legend>${legend}</legend>
            ${scopes
              .filter((s) => s.id.startsWith(`${prefix}.`))
              .map(
                (s) =>
                  html`<label><input type="checkbox" name="scopes" value="${s.id}" ${chosen.has(s.id) ? raw('checked') : ''}> <span>${s.label} <span class="hint">(${s.id}) ${s.description}</span></span></label>`,
              )}</fieldset>`,
          )}
        </fieldset>
        <label for="key-expiry">Expires</label>
        <select id="key-expiry" name="expiry" data-expiry required ${expires.attrs}>
          ${EXPIRY_CHOICES.filter(([v]) => v === 'date' || Number(v) <= maxDays).map(([v, text]) => html`<option value="${v}" ${(form.expiry ?? '30') === v ? raw('selected') : ''}>${text}</option>`)}
        </select>
        <p class="hint" id="expiry-preview" aria-live="polite">${expiryPreview(form, now)}</p>
        ${expires.message}
        <div id="expires-on-field">
          <label for="key-expires-on">Expiry date (when "On a date…" is chosen; at most ${maxDays} days ahead)</label>
          <input type="date" id="key-expires-on" name="expiresOn" min="${min}" max="${lastExpiryDay(Date.now(), maxDays)}" value="${form.expiresOn ?? ''}" ${date.attrs}>
          ${date.message}
        </div>
        <p><button type="submit">Generate key</button> <a href="/settings/keys">Cancel</a></p>
      </form>`;
}

/** A first call the key may make, by the first of its scopes that opens one. */
const FIRST_CALLS: readonly (readonly [scope: string, path: string])[] = [
  ['profile.read', '/users/me'],
  ['projects.read', '/projects?owner=me'],
  ['content.read', '/posts'],
  ['jobs.read', '/jobs'],
  ['radar.read', '/radar'],
  ['github.read', '/github/summary'],
];

/** Ready-to-copy commands with the token filled in: the shell, a first call, and the MCP clients. */
function commands(key: ApiKey, token: string, publicUrl: string): Html {
  const api = `${publicUrl}/api/v1`;
  const first = FIRST_CALLS.find(([scope]) => key.scopes.includes(scope));
  const mcp = key.scopes.some((s) => (MCP_SCOPES as readonly string[]).includes(s));
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const blocks: [id: string, title: string, text: string][] = [['cmd-export', 'In your shell', `export KEY=${token}`]];
  if (first)
    blocks.push(['cmd-curl', 'A first call', `curl -sS -w '\\n' "${api}${first[1]}" -H "Authorization: Bearer $KEY"`]);
  if (mcp) {
    blocks.push([
      'cmd-claude',
      'Claude Code',
      `claude mcp add --transport http shipyard ${api}/mcp --header "Authorization: Bearer $KEY"`,
    ]);
    blocks.push([
      'cmd-cursor',
      'Cursor (.cursor/mcp.json)',
      json({ mcpServers: { shipyard: { url: `${api}/mcp`, headers: { Authorization: `Bearer ${token}` } } } }),
    ]);
    blocks.push([
      'cmd-vscode',
      'VS Code (.vscode/mcp.json)',
      json({
        servers: { shipyard: { type: 'http', url: `${api}/mcp`, headers: { Authorization: `Bearer ${token}` } } },
      }),
    ]);
  }
  return html`<section aria-labelledby="commands-heading"><h2 id="commands-heading">Use it now</h2>
        <p class="hint">Each holds the key: keep them private, as the key itself. Keep the JSON files out of
          version control (add them to <code>.gitignore</code>), or put the key in an environment variable there.</p>
        ${blocks.map(
          ([id, title, text]) => html`<h3>${title}</h3>
        <pre id="${id}" tabindex="0">${text}</pre>
        <p><button type="button" data-copy="${id}" hidden>Copy<span class="visually-hidden"> ${title}</span></button></p>`,
        )}
      </section>`;
}

/** Regenerate a key: a new secret with the same name, scopes and lifetime; the old one stops now or after an overlap. */
export function confirmRegenerateView(
  key: ApiKey,
  csrf: string,
  maxDays: number,
  shown: { refused?: string; error?: string } = {},
): Html {
  if (shown.refused)
    return html`
      <h1>The key "${userText(key.name)}" cannot be regenerated</h1>
      <p role="alert">${shown.refused}</p>
      <p><a class="button" href="/settings/keys">Back to your keys</a> <a href="/settings/keys/new">Generate a new key</a></p>`;
  const error = shown.error;
  const lifetime = regeneratedLifetimeDays(key, maxDays);
  return html`
      <h1>Regenerate the key "${userText(key.name)}"?</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <p>A new secret is made with the same name and scopes, lasting ${lifetime} day${lifetime === 1 ? '' : 's'} from now,
        and shown once. The old secret (ending in <code>…${key.last4}</code>) stops working as you choose below.</p>
      <form method="post" action="/settings/keys/${key.id}/regenerate">
        <input type="hidden" name="_csrf" value="${csrf}">
        <fieldset><legend>When should the old secret stop working?</legend>
          <label><input type="radio" name="overlap" value="0" checked> At once</label>
          <label><input type="radio" name="overlap" value="1"> In 1 hour, while you switch over</label>
          <label><input type="radio" name="overlap" value="24"> In 24 hours</label>
        </fieldset>
        <button type="submit">Regenerate key</button> <a href="/settings/keys">Cancel</a>
      </form>`;
}

export function newKeyView(
  key: ApiKey,
  token: string,
  label: Label,
  publicUrl: string,
  replaced?: { until: Date | null },
): Html {
  return html`
        <h1>Your new API key: ${userText(key.name)}</h1>
        ${
          replaced
            ? html`<p class="notice" role="status">This replaces the key's old secret, which ${
                replaced.until ? html`keeps working until ${when(dateTime(replaced.until))}` : 'no longer works'
              }.</p>`
            : ''
        }
        <div class="notice" role="status">
          <p><strong>Copy it now: it will not be shown again.</strong> Shipyard keeps only a hash of it; if you lose it, revoke it and create another.</p>
          <code class="token" id="new-token" data-testid="new-token">${token}</code>
          <p><button type="button" data-copy="new-token" hidden>Copy to clipboard</button></p>
        </div>
        <p>Scopes: ${scopeList(key, label)}. Expires ${when(day(key.expiresAt))}.</p>
        ${commands(key, token, publicUrl)}
        <p><a class="button" href="/settings/keys">Back to your keys</a></p>`;
}

export function confirmRevokeView(key: ApiKey, csrf: string, now = new Date()): Html {
  // Reached again (the back button) after the key stopped working: what it is now, no button.
  const status = keyStatus(key, now);
  if (status !== 'active')
    return html`
      <h1>The key "${userText(key.name)}" is ${status}</h1>
      <p>It ${status === 'revoked' ? html`was revoked ${when(dateTime(key.revokedAt))}` : html`expired ${when(day(key.expiresAt))}`}; every request with it is refused. There is nothing left to revoke.</p>
      <p><a class="button" href="/settings/keys">Back to your keys</a></p>`;
  return html`
      <h1>Revoke the key "${userText(key.name)}"?</h1>
      <p>Every request with this key (ending in <code>…${key.last4}</code>) is refused from now on. This cannot be undone.</p>
      <form method="post" action="/settings/keys/${key.id}/revoke">
        <input type="hidden" name="_csrf" value="${csrf}">
        <button type="submit" class="danger">Revoke key</button> <a href="/settings/keys">Cancel</a>
      </form>`;
}
