/**
 * Settings → Manage API keys: the list, the create form on its own page (name, scopes by label,
 * a required expiry), the token shown once, and revoke with a confirmation step. Every POST
 * answers with a redirect (post/redirect/get): the new token travels to the page that shows it
 * as a one-time flash (src/sessions/flash.ts), so a reload shows the list, never a second key.
 * Revocation takes effect at once (the key cache drops it in this process). Regenerate makes a
 * new secret for a key (same name, scopes and lifetime), shown the same way, and stops the old one
 * at once or after the overlap the person chose.
 */
import { webOrigin } from './web-context.js';
import { lineProblem } from '../kernel/text.js';
import type { Request, Response } from 'express';
import {
  createKey,
  expiryProblem,
  listKeys,
  REGENERATE_OVERLAP_HOURS,
  type RegenerateOverlap,
  regenerateKey,
  regenerateRefusal,
  revokeKey,
} from '../keys/keys.service.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { recentAddresses } from '../keys/keys.queries.js';
import { ProblemError } from '../kernel/problem.js';
import { html, page } from './views.js';
import type { ScopeEntry } from '../kernel/contract.js';
import { isUuid } from '../kernel/ids.js';
import { putFlash, takeFlash } from '../sessions/flash.js';
import { SESSION_COOKIE } from '../sessions/sessions.service.js';
import {
  confirmRegenerateView,
  confirmRevokeView,
  createForm,
  EXPIRY_CHOICES,
  type Form,
  keysList,
  type Label,
  newKeyView,
  PRESETS,
} from './keys.views.js';

const TOKEN_SHOWN =
  "A new key's token is shown only once. If you did not copy it, revoke that key and generate another.";

type NewKeyFlash = { newKey: { id: string; token: string; replaced?: { until: string | null } } };
const isNewKeyFlash = (v: unknown): v is NewKeyFlash =>
  typeof (v as NewKeyFlash | undefined)?.newKey?.token === 'string';

export function keysPages(scopes: readonly ScopeEntry[], maxDays: number, publicUrl: string, unusedDays: number) {
  const label: Label = (id) => scopes.find((s) => s.id === id)?.label ?? id;

  async function list(req: Request, res: Response): Promise<void> {
    const keys = await listKeys(req.em, req.web!.user!.id);
    const revoked = typeof req.query.revoked === 'string' ? keys.find((k) => k.id === req.query.revoked) : undefined;
    const notices: Record<string, string> = {
      'token-shown': TOKEN_SHOWN,
      welcome: `Welcome, ${req.web!.user!.displayName}: your account is ready. Generate a key to call the API.`,
    };
    const asked = req.query.notice;
    const named = typeof asked === 'string' && Object.hasOwn(notices, asked) ? notices[asked] : undefined;
    const notice = named ?? (revoked ? `The key "${revoked.name}" is revoked.` : undefined);
    const addresses = await recentAddresses(
      req.em,
      keys.map((k) => k.id),
    );
    send(req, res, 'Manage API keys', keysList(keys, label, notice, { addresses, unusedDays }));
  }

  const form = (req: Request, res: Response, shown: { form?: Form; errors?: string[]; status?: number } = {}) =>
    send(
      req,
      res,
      'Generate a new API key',
      createForm(scopes, req.web!.csrf, shown.form ?? {}, shown.errors ?? [], maxDays),
      {
        status: shown.status,
      },
    );

  async function create(req: Request, res: Response): Promise<void> {
    const sent = readForm(req.body as Record<string, unknown>);
    const errors: string[] = [];
    const expiry = checkForm(sent, errors, maxDays);
    if (errors.length || !expiry) return form(req, res, { form: sent, errors, status: 400 });
    try {
      const { key, token } = await createKey(req.em, {
        userId: req.web!.user!.id,
        name: sent.name!,
        scopes: sent.scopes!,
        maxDays,
        ...expiry,
        origin: webOrigin(req),
      });
      await putFlash(req.em, sessionSecret(req), { newKey: { id: key.id, token } } satisfies NewKeyFlash);
      res.redirect(303, '/settings/keys/created');
    } catch (err) {
      if (err instanceof ProblemError && (err.status === 400 || err.status === 409)) {
        // A refused date belongs beside the date field.
        const field = sent.expiry === 'date' && /date/.test(err.detail) ? 'Expiry date: ' : '';
        return form(req, res, { form: sent, errors: [`${field}${err.detail}`], status: err.status });
      }
      throw err;
    }
  }

  /** The token, once; afterwards (a reload, the back button) the list says it was shown. */
  async function created(req: Request, res: Response): Promise<void> {
    const flash = await takeFlash(req.em, sessionSecret(req));
    const key = isNewKeyFlash(flash) ? await ownKey(req, flash.newKey.id) : undefined;
    if (!key || !isNewKeyFlash(flash)) return void res.redirect(303, '/settings/keys?notice=token-shown');
    const replaced = flash.newKey.replaced;
    send(
      req,
      res,
      'Your new API key',
      newKeyView(
        key,
        flash.newKey.token,
        label,
        publicUrl,
        replaced && { until: replaced.until ? new Date(replaced.until) : null },
      ),
    );
  }

  async function confirmRegenerate(req: Request, res: Response): Promise<void> {
    const key = await ownKey(req, String(req.params.id));
    if (!key) return noSuchKey(req, res);
    const refused = regenerateRefusal(key);
    send(req, res, `Regenerate ${key.name}`, confirmRegenerateView(key, req.web!.csrf, maxDays, { refused }), {
      status: refused ? 409 : 200,
    });
  }

  async function regenerate(req: Request, res: Response): Promise<void> {
    const key = await ownKey(req, String(req.params.id));
    if (!key) return noSuchKey(req, res);
    const overlap = Number((req.body as Record<string, unknown>).overlap ?? 0);
    if (!(REGENERATE_OVERLAP_HOURS as readonly number[]).includes(overlap)) {
      const error = 'Choose when the old secret stops working.';
      return send(req, res, `Regenerate ${key.name}`, confirmRegenerateView(key, req.web!.csrf, maxDays, { error }), {
        status: 400,
      });
    }
    try {
      const created = await regenerateKey(req.em, {
        id: key.id,
        ownerId: req.web!.user!.id,
        overlapHours: overlap as RegenerateOverlap,
        maxDays,
        origin: webOrigin(req),
      });
      const until = created.previous.revokedAt ? null : created.previous.expiresAt.toISOString();
      await putFlash(req.em, sessionSecret(req), {
        newKey: { id: created.key.id, token: created.token, replaced: { until } },
      } satisfies NewKeyFlash);
      res.redirect(303, '/settings/keys/created');
    } catch (err) {
      if (err instanceof ProblemError && err.status === 409) {
        const fresh = (await ownKey(req, key.id)) ?? key;
        return send(
          req,
          res,
          `Regenerate ${key.name}`,
          confirmRegenerateView(fresh, req.web!.csrf, maxDays, { refused: err.detail }),
          {
            status: 409,
          },
        );
      }
      throw err;
    }
  }

  async function confirmRevoke(req: Request, res: Response): Promise<void> {
    const key = await ownKey(req, String(req.params.id));
    if (!key) return noSuchKey(req, res);
    send(req, res, `Revoke ${key.name}`, confirmRevokeView(key, req.web!.csrf));
  }

  async function revoke(req: Request, res: Response): Promise<void> {
    const key = await ownKey(req, String(req.params.id));
    if (!key) return noSuchKey(req, res);
    await revokeKey(req.em, key.id, req.web!.user!.id, webOrigin(req));
    res.redirect(303, `/settings/keys?revoked=${key.id}`);
  }

  /** The empty form, or a preset's (`?preset=mcp`): its scopes ticked and a name to start from. */
  const blank = (req: Request, res: Response) => {
    const preset =
      typeof req.query.preset === 'string' && Object.hasOwn(PRESETS, req.query.preset)
        ? PRESETS[req.query.preset]
        : undefined;
    form(req, res, preset ? { form: { name: preset.name, scopes: [...preset.scopes] } } : {});
  };

  return { list, form: blank, create, created, confirmRevoke, revoke, confirmRegenerate, regenerate };
}

function send(
  req: Request,
  res: Response,
  title: string,
  body: ReturnType<typeof html>,
  opts: { status?: number } = {},
) {
  res
    .status(opts.status ?? 200)
    .type('html')
    .send(page(title, req.web!.user, req.web!.csrf, body));
}

const sessionSecret = (req: Request) => req.web!.cookies[SESSION_COOKIE]!;

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
function checkForm(
  form: Form,
  errors: string[],
  maxDays: number,
): { expiresInDays: number } | { expiresAt: Date } | undefined {
  const nameProblem = lineProblem(form.name!);
  if (!form.name!.trim()) errors.push('Name: give the key a name.');
  else if (nameProblem) errors.push(`Name: ${nameProblem}.`);
  // The service's own bound (UTF-16 units), said beside the field rather than above the form.
  else if (form.name!.trim().length > 100)
    errors.push(`Name: at most 100 characters (this one has ${form.name!.trim().length}).`);
  if (form.scopes!.length === 0) errors.push('Scopes: choose at least one.');
  if (form.expiry === 'date') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(form.expiresOn!);
    // The key lasts until the end of the chosen day, UTC.
    const at = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59)) : undefined;
    if (!at || Number.isNaN(at.getTime())) {
      errors.push('Expiry date: choose a date.');
      return undefined;
    }
    // Said with the other fields' problems, not after they are fixed.
    const problem = expiryProblem({ expiresAt: at, maxDays });
    if (problem) errors.push(`Expiry date: ${problem}`);
    return { expiresAt: at };
  }
  if (EXPIRY_CHOICES.some(([v]) => v === form.expiry)) return { expiresInDays: Number(form.expiry) };
  errors.push('Expires: choose when the key expires; every key expires.');
  return undefined;
}

async function ownKey(req: Request, id: string): Promise<ApiKey | undefined> {
  if (!isUuid(id)) return undefined;
  return (await listKeys(req.em, req.web!.user!.id)).find((k) => k.id === id);
}

function noSuchKey(req: Request, res: Response): void {
  send(req, res, 'Not found', html`<h1>No such key</h1><p><a href="/settings/keys">Back to your keys</a></p>`, {
    status: 404,
  });
}
