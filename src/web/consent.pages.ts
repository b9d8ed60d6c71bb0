/**
 * The OAuth consent screen (docs/decisions/0011-oauth-sign-in.md): where a signed-in person
 * gives an MCP client a key. It shows who asks (the client's name, where the answer goes), the
 * scopes asked for (each may be unticked) and the expiry; approve sends the browser back to the
 * client with a one-time code, deny with `access_denied`. The key itself is made when the client
 * exchanges the code, with what was approved here, and is listed on Settings → Manage API keys.
 */
import type { Request, Response } from 'express';
import { MAX_KEY_DAYS } from '../kernel/limits.js';
import type { ScopeEntry } from '../kernel/contract.js';
import { ProblemError } from '../kernel/problem.js';
import {
  approveGrant,
  browserCookie,
  denyGrant,
  GRANT_MINUTES,
  offeredScopes,
  pendingGrant,
  sameBrowser,
} from '../oauth/oauth.service.js';
import type { OAuthGrant } from '../oauth/oauth-grant.entity.js';
import { errorList, html, page, raw, userText, type Html } from './views.js';
import { field } from './web-handler.js';

const EXPIRY_DAYS = [
  ['7', '7 days'],
  ['30', '30 days'],
  ['60', '60 days'],
  ['90', '90 days'],
  ['365', 'One year'],
] as const;
const DEFAULT_DAYS = '30';

/** Where approving or denying sends the browser: an origin, or an app's own scheme (`cursor:`). */
function answerTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

/**
 * The page's policy lets its form lead to the client's redirect URI: browsers hold the redirect
 * after a form's POST to `form-action` too.
 */
function allowAnswerTo(res: Response, grant: OAuthGrant): void {
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self' ${answerTarget(grant.redirectUri)}; frame-ancestors 'none'; base-uri 'none'`,
  );
}

export function consentPages(scopes: readonly ScopeEntry[], issuer: string, maxDays = MAX_KEY_DAYS) {
  // The expiries offered: those within the operator's maximum, or the maximum itself.
  const choices = EXPIRY_DAYS.filter(([v]) => Number(v) <= maxDays);
  const offered: (readonly [string, string])[] = choices.length ? choices : [[String(maxDays), `${maxDays} days`]];
  const byDefault = offered.some(([v]) => v === DEFAULT_DAYS) ? DEFAULT_DAYS : offered.at(-1)![0];
  async function show(req: Request, res: Response): Promise<void> {
    const grant = await pendingGrant(req.em, field(req.query, 'request'));
    if (!grant) return gone(req, res);
    if (!sameBrowser(grant, req.web!.cookies[browserCookie(req.web!.secure)])) return elsewhere(req, res);
    allowAnswerTo(res, grant);
    send(req, res, grant, offeredScopes(grant.requestedScopes).ticked, byDefault, []);
  }

  async function answer(req: Request, res: Response): Promise<void> {
    const body = req.body as Record<string, unknown>;
    const grant = await pendingGrant(req.em, field(body, 'request'));
    if (!grant) return gone(req, res);
    if (!sameBrowser(grant, req.web!.cookies[browserCookie(req.web!.secure)])) return elsewhere(req, res);
    allowAnswerTo(res, grant);
    const decision = field(body, 'decision');
    if (decision === 'deny') return void res.redirect(303, await denyGrant(req.em, grant, issuer));
    if (decision !== 'approve')
      return send(
        req,
        res,
        grant,
        offeredScopes(grant.requestedScopes).ticked,
        byDefault,
        ['Choose Approve or Deny.'],
        400,
      );
    const ticked = (Array.isArray(body.scopes) ? body.scopes : body.scopes === undefined ? [] : [body.scopes]).map(
      String,
    );
    const days = field(body, 'expiry');
    if (!offered.some(([v]) => v === days))
      return send(req, res, grant, ticked, byDefault, ['Expires: choose when the key expires.'], 400);
    try {
      const to = await approveGrant(req.em, grant, {
        userId: req.web!.user!.id,
        scopes: ticked,
        keyExpiresAt: new Date(Date.now() + Number(days) * 86_400_000),
        issuer,
      });
      res.redirect(303, to);
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400)
        return send(req, res, grant, ticked, days, [err.detail], 400);
      throw err;
    }
  }

  function send(
    req: Request,
    res: Response,
    grant: OAuthGrant,
    ticked: readonly string[],
    days: string,
    errors: string[],
    status = 200,
  ) {
    const body = consentView(grant, scopes, { ticked, days, errors, csrf: req.web!.csrf }, offered);
    res
      .status(status)
      .type('html')
      .send(page(`Connect ${grant.clientName}`, req.web!.user, req.web!.csrf, body));
  }

  return { show, answer };
}

function consentView(
  grant: OAuthGrant,
  scopes: readonly ScopeEntry[],
  form: { ticked: readonly string[]; days: string; errors: string[]; csrf: string },
  expiries: readonly (readonly [string, string])[],
): Html {
  const { offered } = offeredScopes(grant.requestedScopes);
  const target = new URL(grant.redirectUri);
  const destination = target.protocol === 'http:' || target.protocol === 'https:' ? target.host : target.protocol;
  return html`<h1>Connect ${userText(grant.clientName)} to your Shipyard account?</h1>
      ${errorList(form.errors)}
      <p>${userText(grant.clientName)} asks for an API key to act as you. Shipyard gives it an ordinary key with
        only the scopes you tick, until the date you choose. You will find it on
        <a href="/settings/keys">Settings → Manage API keys</a>, where you can revoke it at any time.</p>
      <dl class="facts">
        <dt>Client</dt><dd>${userText(grant.clientName)}</dd>
        <dt>Sends you back to</dt><dd><code>${destination}</code></dd>
        <dt>Client id</dt><dd><code>${grant.clientId}</code></dd>
      </dl>
      <form method="post" action="/oauth/consent" novalidate>
        <input type="hidden" name="_csrf" value="${form.csrf}">
        <input type="hidden" name="request" value="${grant.id}">
        <fieldset><legend>Scopes it may use (untick what it should not do)</legend>
          ${offered.map((id) => {
            const s = scopes.find((e) => e.id === id);
            return html`<label><input type="checkbox" name="scopes" value="${id}" ${form.ticked.includes(id) ? raw('checked') : ''}> <span>${s?.label ?? id} <span class="hint">(${id}) ${s?.description ?? ''}</span></span></label>`;
          })}
        </fieldset>
        <label for="consent-expiry">The key expires in</label>
        <select id="consent-expiry" name="expiry" aria-describedby="consent-expiry-hint">
          ${expiries.map(([v, text]) => html`<option value="${v}" ${form.days === v ? raw('selected') : ''}>${text}</option>`)}
        </select>
        <p class="hint" id="consent-expiry-hint">At most ${expiries.at(-1)![1].toLowerCase()}; when it expires, ${userText(grant.clientName)} asks you again.</p>
        <p><button type="submit" name="decision" value="approve">Approve</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button></p>
      </form>`;
}

/**
 * A request started in another browser: whoever sent this link may be trying to get a key to this
 * account for their own app. Nothing is said about the request itself.
 */
function elsewhere(req: Request, res: Response): void {
  res
    .status(400)
    .type('html')
    .send(
      page(
        'Request from another browser',
        req.web!.user,
        req.web!.csrf,
        html`<h1>This sign-in request was started in another browser</h1>
      <p>Only the browser that the app opened may answer it. If you did not just connect an app yourself, close this page:
        someone may have sent you this link to get a key to your account.</p>
      <p>To connect your app, start again from the app, in this browser.</p>
      <p><a href="/settings/keys">Go to your keys</a></p>`,
      ),
    );
}

function gone(req: Request, res: Response): void {
  res
    .status(400)
    .type('html')
    .send(
      page(
        'Request expired',
        req.web!.user,
        req.web!.csrf,
        html`<h1>This sign-in request has expired</h1>
      <p>It was answered already, or it waited more than ${GRANT_MINUTES} minutes. Go back to your app and connect again.</p>
      <p><a href="/settings/keys">Go to your keys</a></p>`,
      ),
    );
}
