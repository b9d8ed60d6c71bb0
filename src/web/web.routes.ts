/**
 * The signed-in web application, in the order a request meets it:
 *   form bodies (urlencoded, 16 KiB) → cookies, session user and CSRF token (web-context.ts)
 *   → CSRF check on every POST (403) → the sign-in and sign-up budget per address (429)
 *   → sign up / sign in / sign out, Settings → Manage API keys, Profile and GitHub, Webhooks, moderation, /docs.
 * Pages that need a user redirect to /signin; errors are pages, not JSON.
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { RequestHandler } from 'express';
import { csrfOk, webContext } from './web-context.js';
import { FAVICON, html, page, SCRIPT, STYLE } from './views.js';
import { keysPages } from './keys.pages.js';
import { accountPages, type AccountLimits } from './account.pages.js';
import { type Handler, wrap } from './web-handler.js';
import { moderationPages } from './moderation.pages.js';
import { DOCS_SCRIPT, DOCS_SETUP_SCRIPT, DOCS_STYLE, docsPage, SCALAR_PATH, serveScalar } from './docs.page.js';
import { settingsPages } from './settings.pages.js';
import { consentPages } from './consent.pages.js';
import { webhooksPages } from './webhooks.pages.js';
import { securityLogPages } from './security-log.pages.js';
import type { GithubClient } from '../github/github.client.js';
import { ProblemError } from '../kernel/problem.js';
import { requestTimeout } from '../http/timeout.js';
import { databaseUnavailable } from '../http/errors.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { findNul } from '../http/kit/nul.js';
import type { OpenApiDocument } from '../kernel/contract.js';
import { changesPage } from './changes.page.js';
import { guidePage } from './guide.page.js';
import { publicPages } from './public.pages.js';
import type { MediaStorage } from '../media/storage.js';
import { problemPages } from './problems.page.js';
import type { Logger } from '../kernel/logger.js';
import type { PasswordCheck } from '../users/password-policy.js';

export function webRouter(opts: {
  contract: OpenApiDocument;
  publicUrl: string;
  /** The sign-in and sign-up budgets per address (src/http/rate-limit.ts). */
  accountLimits: AccountLimits;
  checkPassword: PasswordCheck;
  log: Logger;
  github: GithubClient;
  /** The answer deadline every page and form shares with the API (503 page after it). */
  timeoutMs: number;
  /** The OAuth issuer, when OAuth sign-in is on: the consent screen is served. */
  oauthIssuer?: string;
  /** The longest a key may last (KEY_MAX_DAYS). */
  keyMaxDays: number;
  /** Days the security log keeps an entry (SECURITY_LOG_DAYS). */
  securityLogDays: number;
  /** Days without use after which a key is offered for revocation (KEY_UNUSED_DAYS). */
  keyUnusedDays: number;
  /** Where uploaded images are kept: the public pages show those anybody may see. */
  storage: MediaStorage;
}): Router {
  const secure = opts.publicUrl.startsWith('https://');
  const publicOrigin = new URL(opts.publicUrl).origin;
  const router = Router();
  const keys = keysPages(
    opts.contract['x-scopes'],
    opts.keyMaxDays,
    opts.publicUrl.replace(/\/$/, ''),
    opts.keyUnusedDays,
  );
  const moderation = moderationPages();
  const webhooks = webhooksPages();
  const securityLog = securityLogPages(opts.securityLogDays);
  const settings = settingsPages(opts.github);

  // The pages' own styles and scripts, built into the code: cached for an hour.
  const assets: [path: string, type: string, body: string][] = [
    ['/assets/web.css', 'css', STYLE],
    ['/assets/web.js', 'js', SCRIPT],
    ['/assets/docs-setup.js', 'js', DOCS_SETUP_SCRIPT],
    ['/assets/docs.js', 'js', DOCS_SCRIPT],
    ['/assets/docs.css', 'css', DOCS_STYLE],
  ];
  for (const [path, type, body] of assets) {
    router.get(path, (_req, res) => void res.type(type).set('Cache-Control', 'public, max-age=3600').send(body));
  }
  router.get(SCALAR_PATH, wrap(serveScalar));
  // The icon, where pages link it and where browsers look without a link.
  router.get(
    ['/assets/favicon.svg', '/favicon.ico'],
    (_req, res) => void res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON),
  );

  router.use(requestTimeout(opts.timeoutMs, 'web'));
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));
  // The images the public pages show: no session, no cookie, so any cache may keep one.
  const shown = publicPages(opts.publicUrl.replace(/\/$/, ''), opts.storage);
  router.get('/media/:mediaId', shown.media);
  router.use(webContext(secure));
  router.use(csrfGuard(publicOrigin), refuseNulInForms);

  router.use(accountPages({ secure, limits: opts.accountLimits, checkPassword: opts.checkPassword }));

  router.get(
    '/',
    (req, res) =>
      void res
        .type('html')
        .send(
          page(
            'Projects, roadmaps and build logs',
            req.web!.user,
            req.web!.csrf,
            home(req.web!.user !== undefined, opts.oauthIssuer !== undefined),
          ),
        ),
  );
  router.get('/settings/keys', signedIn(keys.list));
  router.post('/settings/keys', signedIn(keys.create));
  router.get('/settings/keys/new', signedIn(keys.form));
  router.get('/settings/keys/created', signedIn(keys.created));
  router.get('/settings/keys/:id/revoke', signedIn(keys.confirmRevoke));
  router.post('/settings/keys/:id/revoke', signedIn(keys.revoke));
  router.get('/settings/keys/:id/regenerate', signedIn(keys.confirmRegenerate));
  router.post('/settings/keys/:id/regenerate', signedIn(keys.regenerate));
  router.get('/settings/security-log', signedIn(securityLog.show));
  router.get('/settings/security-log.jsonl', signedIn(securityLog.download));
  router.get('/settings/webhooks', signedIn(webhooks.show));
  router.post('/settings/webhooks/redeliver', signedIn(webhooks.redeliver));
  router.get('/settings/profile', signedIn(settings.profile));
  router.post('/settings/profile', signedIn(settings.saveProfile));
  router.get('/settings/github', signedIn(settings.github));
  router.post('/settings/github', signedIn(settings.link));
  router.post('/settings/github/verify', signedIn(settings.verify));
  router.post('/settings/github/sync', signedIn(settings.sync));
  router.get('/admin/moderation', signedIn(moderation.show));
  router.post('/admin/moderation', signedIn(moderation.act));
  router.get('/p/:projectId', shown.project);
  router.get('/u/:username', shown.user);
  router.get('/posts/:postId', shown.post);
  router.get('/docs', wrap(docsPage));
  router.get('/docs/changes', wrap(changesPage(opts.contract)));
  router.get('/docs/guide', wrap(guidePage(opts.publicUrl.replace(/\/$/, ''))));
  const problems = problemPages(opts.contract);
  router.get('/docs/problems', wrap(problems.index));
  router.get('/docs/problems/:slug', wrap(problems.one));
  router.get('/problems/:slug', wrap(problems.typeUri));
  // Where the API reference's sign-in window lands: the reference reads the code from its address.
  router.get(
    '/docs/oauth-callback',
    (req, res) =>
      void res.type('html').send(
        page(
          'Signing in',
          req.web!.user,
          req.web!.csrf,
          html`<h1>Signing in to the API reference</h1><p>This window closes by itself; if it stays, close it and go back to
      <a href="/docs">the API reference</a>.</p>`,
        ),
      ),
  );
  if (opts.oauthIssuer) {
    const consent = consentPages(opts.contract['x-scopes'], opts.oauthIssuer, opts.keyMaxDays);
    router.get('/oauth/consent', signedIn(consent.show));
    router.post('/oauth/consent', signedIn(consent.answer));
  }

  router.use(notFoundPage);
  router.use(errorPage(opts.log));
  return router;
}

/** The start page: what Shipyard is, and the ways in. */
function home(signedIn: boolean, oauth: boolean) {
  return html`<h1>Shipyard</h1>
      <p>Projects, roadmaps, build logs and a community for people who build things: a REST API
        under <code>/api/v1</code> and an MCP server at <code>/api/v1/mcp</code> that keeps a project's
        roadmap and build logs up to date from an AI agent.</p>
      <ul>
        ${
          signedIn
            ? html`<li><a href="/settings/keys">Manage API keys</a>: make a key for a script, the SDK or an MCP client.</li>`
            : html`<li><a href="/signup">Sign up</a> or <a href="/signin">sign in</a>, then make an API key.</li>`
        }
        <li><a href="/docs">The API reference</a>, and the contract it is made from:
          <a href="/api/v1/openapi.json">openapi.json</a>; <a href="/docs/changes">what changed in it</a>, version by version; <a href="/docs/problems">what each error means</a>.</li>
        ${oauth ? html`<li>MCP clients given only the URL sign in with OAuth: you approve them here.</li>` : ''}
      </ul>`;
}

/** A page for signed-in people: anyone else goes to sign in, and comes back after. */
const signedIn = (h: Handler): RequestHandler =>
  wrap((req, res) => {
    if (!req.web!.user) return res.redirect(303, `/signin?next=${encodeURIComponent(req.originalUrl)}`);
    return h(req, res);
  });

/** Every POST must come from this site with a valid CSRF token: otherwise a 403 page. */
function csrfGuard(publicOrigin: string): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST' || csrfOk(req, publicOrigin)) return next();
    res
      .status(403)
      .type('html')
      .send(
        page(
          'Form expired',
          req.web!.user,
          req.web!.csrf,
          html`
      <h1>This form has expired</h1><p>For your safety the form was refused (it came from another site, or the page was too old).
      Go back, reload the page and try again.</p>`,
        ),
      );
  };
}

/** PostgreSQL text cannot hold U+0000: a form carrying it is refused before any handler sees it. */
const refuseNulInForms: RequestHandler = (req, _res, next) => {
  const at = req.method === 'POST' ? findNul(req.body, '') : undefined;
  if (at === undefined) return next();
  const name = at.split('/')[1] ?? 'a field';
  next(
    new ProblemError(
      400,
      'validation',
      'This form cannot be sent as it is',
      `The field "${name}" contains a NUL character (U+0000), which cannot be stored. Go back, remove it and send the form again.`,
    ),
  );
};

const notFoundPage: RequestHandler = (req, res) => {
  res
    .status(404)
    .type('html')
    .send(
      page(
        'Not found',
        req.web?.user,
        req.web?.csrf ?? '',
        html`<h1>Page not found</h1><p><a href="/">Go to the start page</a> or the <a href="/docs">API reference</a>.</p>`,
      ),
    );
};

/** A wait as a person says it: "in 40 seconds", "in about 12 minutes", "in about 2 hours". */
export function waitInWords(seconds: number): string {
  if (seconds < 60) return `in ${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in about ${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `in about ${Math.round(minutes / 60)} hours`;
}

/**
 * A refusal is a page saying why, and so is a 503 (the database out of reach: try again shortly);
 * anything else is logged and a page that says it went wrong.
 */
function errorPage(log: Logger) {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const problem = err instanceof ProblemError ? err : isDatabaseUnavailable(err) ? databaseUnavailable() : undefined;
    if (problem && (problem.status < 500 || problem.status === 503)) {
      if (problem.status === 503)
        log.error('web page unavailable', { requestId: req.requestId, path: req.path, error: err });
      const retryAfter = Number(problem.headers['Retry-After']);
      if (problem.status === 429 && retryAfter > 0) {
        // A person reads a wait in minutes, and needs the way back to the form.
        const detail = problem.detail.replace(/; retry in \d+ seconds\.$/, '.');
        res
          .status(429)
          .set(problem.headers)
          .type('html')
          .send(
            page(
              problem.title,
              req.web?.user,
              req.web?.csrf ?? '',
              html`<h1>${problem.title}</h1><p>${detail} Try again ${waitInWords(retryAfter)}.</p>
      <p><a href="${req.path}">Back to the form</a></p>`,
            ),
          );
        return;
      }
      res
        .status(problem.status)
        .set(problem.headers)
        .type('html')
        .send(
          page(
            problem.title,
            req.web?.user,
            req.web?.csrf ?? '',
            html`<h1>${problem.title}</h1><p>${problem.detail}</p>`,
          ),
        );
      return;
    }
    if (!req.web) return next(err);
    log.error('web page failed', { requestId: req.requestId, path: req.path, error: err });
    res
      .status(500)
      .type('html')
      .send(
        page(
          'Something went wrong',
          req.web.user,
          req.web.csrf,
          html`
      <h1>Something went wrong</h1><p>Nothing you sent was lost on purpose; please try again. (Request ${req.requestId}.)</p>`,
        ),
      );
  };
}
