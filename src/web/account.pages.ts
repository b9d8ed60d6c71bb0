/**
 * Sign up, sign in and sign out. Each sign-in and sign-up takes a unit of the address's budget
 * first, which a sign-in keeps only when the password was wrong (src/http/rate-limit.ts
 * signInBudget); a new session gets a new pre-session secret, so every CSRF token from before
 * sign-in is void.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import {
  closeSession,
  DEVICE_COOKIE,
  DEVICE_DAYS,
  signInSubject,
  openSession,
  rememberDevice,
  SESSION_COOKIE,
  SESSION_DAYS,
  signIn,
  signUp,
} from '../sessions/sessions.service.js';
import { cookieOptions, renewPreSession, webOrigin } from './web-context.js';
import { errorList, fieldError, html, page } from './views.js';
import { ProblemError } from '../kernel/problem.js';
import { PASSWORD_MAX, PASSWORD_MIN, type PasswordCheck } from '../users/password-policy.js';
import { field, wrap } from './web-handler.js';

/** Where to go after signing in: a path of this site, never another site or the sign-in page. */
const safeNext = (v: string) => (/^\/(?!\/)[\w\-./?=&%]*$/.test(v) && !v.startsWith('/signin') ? v : '/settings/keys');

/** The query that carries `next` on to the other form (sign in ⇄ sign up), when it goes somewhere of its own. */
const carried = (next: string) => (next === '/settings/keys' ? '' : `?next=${encodeURIComponent(next)}`);
const nextOf = (req: Request) => safeNext(field(req.query, 'next') || field(req.body, 'next'));

export type AccountLimits = { signIn: RequestHandler; signUp: RequestHandler };

export function accountPages(opts: { secure: boolean; limits: AccountLimits; checkPassword: PasswordCheck }): Router {
  const { secure, limits, checkPassword } = opts;
  const router = Router();
  const startSession = (res: Response, secret: string) => {
    res.cookie(SESSION_COOKIE, secret, cookieOptions(secure, SESSION_DAYS * 86_400_000));
    renewPreSession(res, secure);
  };

  router.get('/signin', (req, res) => signInPage(req, res));
  // The names people type for it (not /register: OAuth client registration lives there).
  const movedTo =
    (path: string): RequestHandler =>
    (req, res) => {
      const query = req.originalUrl.indexOf('?');
      res.redirect(301, `${path}${query === -1 ? '' : req.originalUrl.slice(query)}`);
    };
  router.get(['/login', '/log-in', '/sign-in'], movedTo('/signin'));
  router.get(['/sign-up', '/join'], movedTo('/signup'));
  // Whose budgets a sign-in spends: the account's, or its remembered browser's (src/http/rate-limit.ts).
  const recogniseSubject: RequestHandler = (req, _res, next) => {
    signInSubject(req.em, field(req.body, 'login'), req.web!.cookies[DEVICE_COOKIE]).then((subject) => {
      req.signInAccount = subject.account;
      req.knownDevice = subject.device;
      next();
    }, next);
  };
  router.post(
    '/signin',
    recogniseSubject,
    limits.signIn,
    wrap(async (req, res) => {
      const login = field(req.body, 'login');
      const user = await signIn(req.em, login, field(req.body, 'password'), webOrigin(req));
      // A 401: the sign-in keeps the unit of the budget it took.
      if (!user) return signInPage(req, res, ['The username, email or password is not right.'], 401, login);
      startSession(res, (await openSession(req.em, user.id)).secret);
      if (!req.knownDevice)
        res.cookie(
          DEVICE_COOKIE,
          await rememberDevice(req.em, user.id),
          cookieOptions(secure, DEVICE_DAYS * 86_400_000),
        );
      res.redirect(303, safeNext(field(req.body, 'next')));
    }),
  );
  router.get('/signup', (req, res) => signUpPage(req, res));
  router.post(
    '/signup',
    limits.signUp,
    wrap(async (req, res) => {
      const form = {
        username: field(req.body, 'username'),
        email: field(req.body, 'email'),
        displayName: field(req.body, 'displayName'),
      };
      try {
        const user = await signUp(req.em, { ...form, password: field(req.body, 'password') }, checkPassword);
        startSession(res, (await openSession(req.em, user.id)).secret);
        // Sent here on the way somewhere (an app's sign-in asking for consent): on there.
        const next = nextOf(req);
        res.redirect(303, next === '/settings/keys' ? '/settings/keys?notice=welcome' : next);
      } catch (err) {
        if (err instanceof ProblemError && (err.status === 400 || err.status === 409)) {
          // Every field's problem at once, as the key form lists them.
          return signUpPage(req, res, err.extra.errors?.map((e) => e.message) ?? [err.detail], err.status, form);
        }
        // The password check could not take it now (too many waiting, or its thread ended): the
        // form again, filled in, to send in a moment.
        if (err instanceof ProblemError && err.status === 503) {
          res.set(err.headers);
          return signUpPage(req, res, [err.detail], 503, form);
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
      await closeSession(req.em, req.web!.cookies[SESSION_COOKIE], webOrigin(req));
      res.clearCookie(SESSION_COOKIE, cookieOptions(secure));
      renewPreSession(res, secure);
      res.redirect(303, '/signin');
    }),
  );
  return router;
}

function signInPage(req: Request, res: Response, errors: string[] = [], status = 200, login = ''): void {
  res
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
        <input type="hidden" name="next" value="${nextOf(req)}">
        <label for="login">Username or email</label>
        <input type="text" id="login" name="login" autocomplete="username" required value="${login}" ${errors.length ? '' : 'autofocus'}>
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required>
        <p><button type="submit">Sign in</button></p>
      </form><p>No account? <a href="/signup${carried(nextOf(req))}">Sign up</a>.</p>`,
      ),
    );
}

function signUpPage(
  req: Request,
  res: Response,
  errors: string[] = [],
  status = 200,
  form: Record<string, string> = {},
): void {
  // Each field marked with its own message, beside it; what was typed is kept, but the password.
  const f = {
    username: fieldError(errors, 'Username', 'username', 'username-hint'),
    email: fieldError(errors, 'Email', 'email'),
    displayName: fieldError(errors, 'Display name', 'displayName', 'displayName-hint'),
    password: fieldError(errors, 'Password', 'new-password', 'password-hint'),
  };
  res
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
        <input type="hidden" name="next" value="${nextOf(req)}">
        <label for="username">Username</label>
        <input type="text" id="username" name="username" autocomplete="username" required maxlength="39" value="${form.username ?? ''}" ${f.username.attrs}>
        ${f.username.message}
        <p class="hint" id="username-hint">Lowercase letters, digits and inner hyphens; at most 39.</p>
        <label for="email">Email</label>
        <input type="email" id="email" name="email" autocomplete="email" required value="${form.email ?? ''}" ${f.email.attrs}>
        ${f.email.message}
        <label for="displayName">Display name (optional)</label>
        <input type="text" id="displayName" name="displayName" autocomplete="name" maxlength="100" value="${form.displayName ?? ''}" ${f.displayName.attrs}>
        ${f.displayName.message}
        <p class="hint" id="displayName-hint">How others see you; your username when left empty.</p>
        <label for="new-password">Password</label>
        <input type="password" id="new-password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" ${f.password.attrs}>
        ${f.password.message}
        <p class="hint" id="password-hint">At least ${PASSWORD_MIN} characters; a few unrelated words make a good password. Not a common one, and without your username.</p>
        <p><button type="submit">Sign up</button></p>
      </form><p>Already have an account? <a href="/signin${carried(nextOf(req))}">Sign in</a>.</p>`,
      ),
    );
}
