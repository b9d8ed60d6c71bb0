/**
 * The signed-in web application, in the order a request meets it:
 *   form bodies (urlencoded, 16 KiB) → cookies, session user and CSRF token (web-context.ts)
 *   → CSRF check on every POST (403) → the failed sign-in budget per address (429)
 *   → sign up / sign in / sign out, Settings → Manage API keys, Profile and GitHub, moderation, /docs.
 * Pages that need a user redirect to /signin; errors are pages, not JSON.
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { RequestHandler } from 'express';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import {
  closeSession,
  openSession,
  SESSION_COOKIE,
  SESSION_DAYS,
  signIn,
  signUp,
} from '../sessions/sessions.service.js';
import { cookieOptions, csrfOk, renewPreSession, webContext } from './web-context.js';
import { errorList, html, page, SCRIPT, STYLE } from './views.js';
import { keysPages } from './keys.pages.js';
import { moderationPages } from './moderation.pages.js';
import { docsPage } from './docs.page.js';
import { settingsPages } from './settings.pages.js';
import type { GithubClient } from '../github/github.client.js';
import { ProblemError } from '../http/problem.js';
import { findNul } from '../http/nul.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../users/password-policy.js';
import type { OpenApiDocument } from '../http/contract.js';
import type { Logger } from '../http/log.js';

type Handler = (req: Request, res: Response) => Promise<void> | void;
const wrap =
  (h: Handler): RequestHandler =>
  (req, res, next) => {
    Promise.resolve(h(req, res)).catch(next);
  };

const field = (body: unknown, name: string): string => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};

export function webRouter(opts: {
  contract: OpenApiDocument;
  publicUrl: string;
  signInLimiter: RequestHandler;
  log: Logger;
  github: GithubClient;
}): Router {
  const secure = opts.publicUrl.startsWith('https://');
  const publicOrigin = new URL(opts.publicUrl).origin;
  const router = Router();
  const keys = keysPages(opts.contract['x-scopes']);
  const moderation = moderationPages();
  const docs = docsPage(opts.contract);
  const settings = settingsPages(opts.github);

  router.get(
    '/assets/web.css',
    (_req, res) => void res.type('css').set('Cache-Control', 'public, max-age=3600').send(STYLE),
  );
  router.get(
    '/assets/web.js',
    (_req, res) => void res.type('js').set('Cache-Control', 'public, max-age=3600').send(SCRIPT),
  );

  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));
  router.use(webContext(secure));
  router.use((req, res, next) => {
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
  });
  // PostgreSQL text cannot hold U+0000: a form carrying it is refused before any handler sees it.
  router.use((req, _res, next) => {
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
  });

  const signedIn = (h: Handler): RequestHandler =>
    wrap((req, res) => {
      if (!req.web!.user) return res.redirect(303, `/signin?next=${encodeURIComponent(req.originalUrl)}`);
      return h(req, res);
    });
  const safeNext = (v: string) =>
    /^\/(?!\/)[\w\-./?=&%]*$/.test(v) && !v.startsWith('/signin') ? v : '/settings/keys';

  // A new session, and a new pre-session secret: every CSRF token from before sign-in is void.
  function startSession(res: Response, secret: string) {
    res.cookie(SESSION_COOKIE, secret, cookieOptions(secure, SESSION_DAYS * 86_400_000));
    renewPreSession(res, secure);
  }

  // ---- sign in
  const signInPage = (req: Request, res: Response, errors: string[] = [], status = 200, login = '') =>
    void res
      .status(status)
      .type('html')
      .send(
        page(
          'Sign in',
          req.web!.user,
          req.web!.csrf,
          html`
      <h1>Sign in</h1>${errorList(errors)}
      <form method="post" action="/signin">
        <input type="hidden" name="_csrf" value="${req.web!.csrf}">
        <input type="hidden" name="next" value="${safeNext(field(req.query, 'next') || field(req.body, 'next'))}">
        <label for="login">Username or email</label>
        <input type="text" id="login" name="login" autocomplete="username" required value="${login}" ${errors.length ? '' : 'autofocus'}>
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required>
        <p><button type="submit">Sign in</button></p>
      </form><p>No account? <a href="/signup">Sign up</a>.</p>`,
        ),
      );
  router.get('/signin', (req, res) => signInPage(req, res));
  router.post(
    '/signin',
    opts.signInLimiter,
    wrap(async (req, res) => {
      const login = field(req.body, 'login');
      const user = await signIn(req.em, login, field(req.body, 'password'));
      // 401 is what the sign-in budget counts.
      if (!user) return signInPage(req, res, ['The username, email or password is not right.'], 401, login);
      startSession(res, (await openSession(req.em, user.id)).secret);
      res.redirect(303, safeNext(field(req.body, 'next')));
    }),
  );

  // ---- sign up
  const signUpPage = (
    req: Request,
    res: Response,
    errors: string[] = [],
    status = 200,
    form: Record<string, string> = {},
  ) =>
    void res
      .status(status)
      .type('html')
      .send(
        page(
          'Sign up',
          req.web!.user,
          req.web!.csrf,
          html`
      <h1>Create your account</h1>${errorList(errors)}
      <form method="post" action="/signup">
        <input type="hidden" name="_csrf" value="${req.web!.csrf}">
        <label for="username">Username</label>
        <input type="text" id="username" name="username" autocomplete="username" required maxlength="39" value="${form.username ?? ''}" aria-describedby="username-hint">
        <p class="hint" id="username-hint">Lowercase letters, digits and inner hyphens; at most 39.</p>
        <label for="email">Email</label>
        <input type="email" id="email" name="email" autocomplete="email" required value="${form.email ?? ''}">
        <label for="displayName">Display name</label>
        <input type="text" id="displayName" name="displayName" autocomplete="name" maxlength="100" value="${form.displayName ?? ''}">
        <label for="new-password">Password</label>
        <input type="password" id="new-password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" aria-describedby="password-hint">
        <p class="hint" id="password-hint">At least ${PASSWORD_MIN} characters; a few unrelated words make a good password. Not a common one, and without your username.</p>
        <p><button type="submit">Sign up</button></p>
      </form><p>Already have an account? <a href="/signin">Sign in</a>.</p>`,
        ),
      );
  router.get('/signup', (req, res) => signUpPage(req, res));
  router.post(
    '/signup',
    opts.signInLimiter,
    wrap(async (req, res) => {
      const form = {
        username: field(req.body, 'username'),
        email: field(req.body, 'email'),
        displayName: field(req.body, 'displayName'),
      };
      const password = field(req.body, 'password');
      try {
        const user = await signUp(req.em, { ...form, password });
        startSession(res, (await openSession(req.em, user.id)).secret);
        res.redirect(303, '/settings/keys');
      } catch (err) {
        if (err instanceof ProblemError && (err.status === 400 || err.status === 409)) {
          // Every field's problem at once, as the key form lists them.
          return signUpPage(req, res, err.extra.errors?.map((e) => e.message) ?? [err.detail], err.status, form);
        }
        if (err instanceof UniqueConstraintViolationException)
          return signUpPage(req, res, ['That username or email is taken.'], 409, form);
        throw err;
      }
    }),
  );

  router.post(
    '/signout',
    wrap(async (req, res) => {
      await closeSession(req.em, req.web!.cookies[SESSION_COOKIE]);
      res.clearCookie(SESSION_COOKIE, cookieOptions(secure));
      renewPreSession(res, secure);
      res.redirect(303, '/signin');
    }),
  );

  router.get('/', (req, res) => res.redirect(303, req.web!.user ? '/settings/keys' : '/signin'));
  router.get('/settings/keys', signedIn(keys.list));
  router.post('/settings/keys', signedIn(keys.create));
  router.get('/settings/keys/:id/revoke', signedIn(keys.confirmRevoke));
  router.post('/settings/keys/:id/revoke', signedIn(keys.revoke));
  router.get('/settings/profile', signedIn(settings.profile));
  router.post('/settings/profile', signedIn(settings.saveProfile));
  router.get('/settings/github', signedIn(settings.github));
  router.post('/settings/github', signedIn(settings.link));
  router.post('/settings/github/sync', signedIn(settings.sync));
  router.get('/admin/moderation', signedIn(moderation.show));
  router.post('/admin/moderation', signedIn(moderation.act));
  router.get('/docs', wrap(docs));

  router.use((req, res) => {
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
  });
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    if (err instanceof ProblemError && err.status < 500) {
      res
        .status(err.status)
        .set(err.headers)
        .type('html')
        .send(page(err.title, req.web?.user, req.web?.csrf ?? '', html`<h1>${err.title}</h1><p>${err.detail}</p>`));
      return;
    }
    if (!req.web) return next(err);
    opts.log.error('web page failed', { requestId: req.requestId, path: req.path, error: err });
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
  });
  return router;
}
