/** The rows and the filter of Settings → Security log, and the words for each kind and channel. */
import type { ApiKey } from '../keys/api-key.entity.js';
import type { SecurityEvent } from '../security-log/security-event.entity.js';
import {
  SECURITY_EVENT_KINDS,
  type SecurityEventKind,
  type SecurityLogFilter,
  UNFAMILIAR_KINDS,
} from '../security-log/security-log.service.js';
import { html, raw, userText, type Html, utcMinute } from './views.js';

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

const orDash = (v: string | null | undefined): Html => (v ? userText(v) : raw('<span class="hint">—</span>'));

export function securityLogRow(event: SecurityEvent): Html {
  const kind = event.kind as SecurityEventKind;
  const unfamiliar = UNFAMILIAR_KINDS.has(kind);
  const what = KIND_LABELS[kind] ?? kind;
  return html`<tr${unfamiliar ? raw(' class="unfamiliar"') : ''}>
      <td data-label="When"><span class="nowrap">${utcMinute(event.occurredAt)}</span></td>
      <td data-label="What">${unfamiliar ? html`<strong>New:</strong> ` : ''}${what}${event.operation ? html` <span class="hint">(${event.operation})</span>` : ''}</td>
      <td data-label="Key">${orDash(event.keyName)}</td>
      <td data-label="Through">${event.channel ? (CHANNEL_LABELS[event.channel] ?? event.channel) : '—'}</td>
      <td data-label="Client">${orDash(event.client)}</td>
      <td data-label="From">${event.address ? html`<code>${userText(event.address)}</code>` : orDash(null)}</td>
      <td data-label="Resource">${event.resourceName ? html`${userText(event.resourceName)}<br>` : ''}${event.resource ? html`<code class="wrap">${userText(event.resource)}</code>` : orDash(null)}</td>
    </tr>`;
}

export function filterForm(keys: ApiKey[], filter: SecurityLogFilter): Html {
  return html`<form method="get" action="/settings/security-log" class="filters">
      <div class="field"><label for="log-key">Key</label>
      <select id="log-key" name="key">
        <option value="">All keys</option>
        ${keys.map((k) => html`<option value="${k.id}" ${filter.keyId === k.id ? raw('selected') : ''}>${k.name} (…${k.last4})</option>`)}
      </select></div>
      <div class="field"><label for="log-kind">What</label>
      <select id="log-kind" name="kind">
        <option value="">Everything</option>
        ${SECURITY_EVENT_KINDS.map((k) => html`<option value="${k}" ${filter.kind === k ? raw('selected') : ''}>${KIND_LABELS[k]}</option>`)}
      </select></div>
      <button type="submit">Show</button>
    </form>`;
}
