/**
 * Settings → Manage API keys: the list (expired and revoked keys stay visible), the create
 * form (name, scopes by label, a required expiry), the token shown once, and revoke with a
 * confirmation step. Revocation takes effect at once (the key cache drops it in this process).
 */
import type { Request, Response } from 'express';
import { createKey, keyStatus, lastExpiryDay, listKeys, MAX_KEY_DAYS, revokeKey } from '../keys/keys.service.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { ProblemError } from '../http/problem.js';
import { errorList, html, page, raw, type Html } from './views.js';
import type { ScopeEntry } from '../http/contract.js';
import { isUuid } from '../http/ids.js';

const EXPIRY_CHOICES = [
  ['7', '7 days'],
  ['30', '30 days'],
  ['60', '60 days'],
  ['90', '90 days'],
  ['365', 'One year'],
  ['date', 'On a date…'],
] as const;
const day = (d: Date | null | undefined) => (d ? d.toISOString().slice(0, 10) : '—');
const dateTime = (d: Date | null | undefined) =>
  d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never';

type Form = { name?: string; scopes?: string[]; expiry?: string; expiresOn?: string };

type Label = (scopeId: string) => string;

export function keysPages(scopes: readonly ScopeEntry[]) {
  const label: Label = (id) => scopes.find((s) => s.id === id)?.label ?? id;
  const list = (req: Request, res: Response, shown: Shown = {}) => listPage(req, res, scopes, label, shown);

  async function create(req: Request, res: Response): Promise<void> {
    const form = readForm(req.body as Record<string, unknown>);
    const errors: string[] = [];
    const expiry = checkForm(form, errors);
    if (errors.length || !expiry) return list(req, res, { form, errors, status: 400 });
    try {
      const { key, token } = await createKey(req.em, {
        userId: req.web!.user!.id,
        name: form.name!,
        scopes: form.scopes!,
        ...expiry,
      });
      res
        .status(201)
        .type('html')
        .send(newKeyPage(req, key, token, label));
    } catch (err) {
      if (err instanceof ProblemError && (err.status === 400 || err.status === 409))
        return list(req, res, { form, errors: [err.detail], status: err.status });
      throw err;
    }
  }

  async function revoke(req: Request, res: Response): Promise<void> {
    const key = await ownKey(req);
    if (!key) return void res.status(404).type('html').send(noSuchKey(req));
    await revokeKey(req.em, key.id, req.web!.user!.id);
    await list(req, res, { notice: `The key "${key.name}" is revoked.` });
  }

  return { list: (req: Request, res: Response) => list(req, res), create, confirmRevoke, revoke };
}

/** What the list page shows beside the keys: the create form as sent, its errors, a notice. */
type Shown = { form?: Form; errors?: string[]; status?: number; notice?: string };

async function listPage(req: Request, res: Response, scopes: readonly ScopeEntry[], label: Label, shown: Shown) {
  const { user, csrf } = req.web!;
  const keys = await listKeys(req.em, user!.id);
  const { form = {}, errors = [], status = 200, notice } = shown;
  res
    .status(status)
    .type('html')
    .send(
      page(
        'Manage API keys',
        user,
        csrf,
        html`
      <h1>Settings → Manage API keys</h1>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
      <p>A key calls the API as you, with only the scopes you give it, until it expires or you revoke it.
        Send it as <code>Authorization: Bearer shipyard_pat_…</code>. See the <a href="/docs">API reference</a>.</p>
      <section aria-labelledby="keys-heading"><h2 id="keys-heading">Your keys</h2>
      ${
        keys.length
          ? html`<table><caption class="hint">${keys.length} key${keys.length === 1 ? '' : 's'}, newest first</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Ends with</th><th scope="col">Status</th><th scope="col">Action</th></tr></thead>
            <tbody>${keys.map((key) => keyRow(key, label))}</tbody></table>`
          : html`<p>No keys yet.</p>`
      }
      </section>
      ${createForm(scopes, csrf, form, errors)}`,
      ),
    );
}

function createForm(scopes: readonly ScopeEntry[], csrf: string, form: Form, errors: string[]): Html {
  const chosen = new Set(form.scopes ?? []);
  const max = lastExpiryDay();
  const min = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  return html`<section aria-labelledby="create-heading"><h2 id="create-heading">Create a key</h2>
      ${errorList(errors)}
      <form method="post" action="/settings/keys" novalidate>
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="key-name">Name</label>
        <input type="text" id="key-name" name="name" maxlength="100" required value="${form.name ?? ''}" aria-describedby="key-name-hint">
        <p class="hint" id="key-name-hint">What the key is for, e.g. "laptop" or "CI".</p>
        <fieldset><legend>Scopes (what the key may do; nothing implies anything else)</legend>
          ${scopes.map((s) => html`<label><input type="checkbox" name="scopes" value="${s.id}" ${chosen.has(s.id) ? raw('checked') : ''}> <span>${s.label} <span class="hint">(${s.id}) ${s.description}</span></span></label>`)}
        </fieldset>
        <label for="key-expiry">Expires</label>
        <select id="key-expiry" name="expiry" data-expiry required>
          ${EXPIRY_CHOICES.map(([v, text]) => html`<option value="${v}" ${(form.expiry ?? '30') === v ? raw('selected') : ''}>${text}</option>`)}
        </select>
        <div id="expires-on-field">
          <label for="key-expires-on">Expiry date (when "On a date…" is chosen; at most ${MAX_KEY_DAYS} days ahead)</label>
          <input type="date" id="key-expires-on" name="expiresOn" min="${min}" max="${max}" value="${form.expiresOn ?? ''}">
        </div>
        <p><button type="submit">Create key</button></p>
      </form></section>`;
}

function keyRow(key: ApiKey, label: Label): Html {
  const status = keyStatus(key);
  return html`<tr>
      <td data-label="Name">${key.name}</td>
      <td data-label="Scopes">${key.scopes.map((s, i) => html`${i ? ', ' : ''}${label(s)}`)}</td>
      <td data-label="Created">${day(key.createdAt)}</td>
      <td data-label="Expires">${day(key.expiresAt)}</td>
      <td data-label="Last used">${dateTime(key.lastUsedAt)}</td>
      <td data-label="Ends with"><code>…${key.last4}</code></td>
      <td data-label="Status"><span class="status-${status}">${status}</span></td>
      <td data-label="Action">${status === 'revoked' ? '' : html`<a href="/settings/keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name}</span></a>`}</td>
    </tr>`;
}

/** The create form as sent: every field a string (scopes a list), whatever the body held. */
function readForm(body: Record<string, unknown>): Form {
  return {
    name: typeof body.name === 'string' ? body.name : '',
    scopes: (Array.isArray(body.scopes) ? body.scopes : body.scopes === undefined ? [] : [body.scopes]).map(String),
    expiry: typeof body.expiry === 'string' ? body.expiry : '',
    expiresOn: typeof body.expiresOn === 'string' ? body.expiresOn : '',
  };
}

/** Every problem with the form goes into `errors` at once; the expiry it asks for, when it names one. */
function checkForm(form: Form, errors: string[]): { expiresInDays: number } | { expiresAt: Date } | undefined {
  if (!form.name!.trim()) errors.push('Name: give the key a name.');
  if (form.scopes!.length === 0) errors.push('Scopes: choose at least one.');
  if (form.expiry === 'date') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(form.expiresOn!);
    // The key lasts until the end of the chosen day, UTC.
    const at = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59)) : undefined;
    if (at && !Number.isNaN(at.getTime())) return { expiresAt: at };
    errors.push('Expiry date: choose a date.');
    return undefined;
  }
  if (EXPIRY_CHOICES.some(([v]) => v === form.expiry)) return { expiresInDays: Number(form.expiry) };
  errors.push('Expires: choose when the key expires; every key expires.');
  return undefined;
}

function newKeyPage(req: Request, key: ApiKey, token: string, label: Label): string {
  const { user, csrf } = req.web!;
  return page(
    'Your new API key',
    user,
    csrf,
    html`
        <h1>Your new API key: ${key.name}</h1>
        <div class="notice" role="status">
          <p><strong>Copy it now: it will not be shown again.</strong> Shipyard keeps only a hash of it; if you lose it, revoke it and create another.</p>
          <code class="token" id="new-token" data-testid="new-token">${token}</code>
          <p><button type="button" data-copy="new-token" hidden>Copy to clipboard</button></p>
        </div>
        <p>Scopes: ${key.scopes.map((s, i) => html`${i ? ', ' : ''}${label(s)}`)}. Expires ${day(key.expiresAt)}.</p>
        <p><a class="button" href="/settings/keys">Back to your keys</a></p>`,
  );
}

async function ownKey(req: Request): Promise<ApiKey | undefined> {
  const id = String(req.params.id);
  if (!isUuid(id)) return undefined;
  return (await listKeys(req.em, req.web!.user!.id)).find((k) => k.id === id);
}

function noSuchKey(req: Request): string {
  return page(
    'Not found',
    req.web!.user,
    req.web!.csrf,
    html`<h1>No such key</h1><p><a href="/settings/keys">Back to your keys</a></p>`,
  );
}

async function confirmRevoke(req: Request, res: Response): Promise<void> {
  const { user, csrf } = req.web!;
  const key = await ownKey(req);
  if (!key) return void res.status(404).type('html').send(noSuchKey(req));
  res.type('html').send(
    page(
      `Revoke ${key.name}`,
      user,
      csrf,
      html`
      <h1>Revoke the key "${key.name}"?</h1>
      <p>Every request with this key (ending in <code>…${key.last4}</code>) is refused from now on. This cannot be undone.</p>
      <form method="post" action="/settings/keys/${key.id}/revoke">
        <input type="hidden" name="_csrf" value="${csrf}">
        <button type="submit" class="danger">Revoke key</button> <a href="/settings/keys">Cancel</a>
      </form>`,
    ),
  );
}
