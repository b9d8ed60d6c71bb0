/**
 * The web application over plain HTTP (the browser test drives the same pages in Chromium):
 * sign-up and sign-in, cookies, CSRF, the sign-in budget, the keys screen's rules, and the
 * session-only moderation operations.
 */
import { loadContract } from '../src/kernel/contract.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, raw, userWithKey, uniqueName, type TestServer } from './harness.js';
import { loadConfig } from '../src/config.js';
import { createUser } from '../src/users/users.service.js';
import { createKey } from '../src/keys/keys.service.js';
import { Post } from '../src/posts/post.entity.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { User } from '../src/users/user.entity.js';
import { Session } from '../src/sessions/session.entity.js';
import { FakeGithub } from './fake-github.js';
import { Browser } from './cookie-browser.js';

let t: TestServer;
let gh: FakeGithub;
beforeAll(async () => {
  gh = await new FakeGithub().start();
  t = await startServer({ githubApiUrl: gh.url });
});
afterAll(async () => {
  await t?.close();
  await gh?.stop();
});

async function signedUp(): Promise<{ b: Browser; username: string }> {
  const b = new Browser(t.baseUrl);
  await b.get('/signup');
  const username = uniqueName();
  const res = await b.post('/signup', {
    _csrf: b.csrf(),
    username,
    email: `${username}@example.test`,
    displayName: 'Web Person',
    password: 'a long enough password',
  });
  expect(res.status).toBe(303);
  expect(res.location).toBe('/settings/keys?notice=welcome');
  // The welcome, and the signed-in session's own CSRF token.
  expect((await b.get(res.location!)).text).toContain('Welcome, Web Person: your account is ready.');
  return { b, username };
}

/** The page a successful key form redirects to: the new token, shown once. */
async function shownOnce(b: Browser, posted: { status: number; location: string | null }) {
  expect(posted.status).toBe(303);
  expect(posted.location).toBe('/settings/keys/created');
  const shown = await b.get('/settings/keys/created');
  expect(shown.status).toBe(200);
  return shown;
}

describe('accounts and sessions', () => {
  it.each([
    ['/login', '/signin'],
    ['/sign-in?next=%2Fsettings%2Fwebhooks', '/signin?next=%2Fsettings%2Fwebhooks'],
    ['/log-in', '/signin'],
    ['/sign-up', '/signup'],
  ])('sends %s, a name people type, to %s', async (from, to) => {
    const res = await fetch(`${t.baseUrl}${from}`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe(to);
    // Not OAuth's client registration, which answers JSON at /register.
    expect((await fetch(`${t.baseUrl}/register`, { redirect: 'manual' })).status).not.toBe(301);
  });

  it('signs up into a session with HttpOnly, SameSite=Lax cookies, and signs out', async () => {
    const b = new Browser(t.baseUrl);
    const first = await b.get('/signup');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(first.headers.get('cache-control')).toBe('no-store');
    const username = uniqueName();
    const res = await b.post('/signup', {
      _csrf: b.csrf(),
      username,
      email: `${username}@example.test`,
      displayName: 'W',
      password: 'a long enough password',
    });
    const session = res.headers.getSetCookie().find((c) => c.startsWith('shipyard_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
    expect(session).not.toMatch(/Secure/); // PUBLIC_URL is http in tests; https turns it on
    expect((await b.get('/settings/keys')).text).toContain(`Sign out <bdi>${username}</bdi>`);
    expect((await b.post('/signout', { _csrf: b.csrf() })).location).toBe('/signin');
    expect((await b.get('/settings/keys')).location).toMatch(/^\/signin\?next=/);
  });

  it('explains a refused sign-up on the form, and keeps what was typed', async () => {
    const b = new Browser(t.baseUrl);
    await b.get('/signup');
    const short = await b.post('/signup', {
      _csrf: b.csrf(),
      username: 'Not Valid!',
      email: 'not-an-email',
      displayName: '',
      password: 'short',
    });
    expect(short.status).toBe(400);
    expect(short.text).toContain('role="alert"');
    // Every field's problem at once.
    expect(short.text).toMatch(/<li>Username: &#39;Not Valid!&#39; is not valid/);
    expect(short.text).toMatch(/<li>Email: &#39;not-an-email&#39; is not an email address/);
    expect(short.text).toMatch(/<li>Password: at least 15 characters \(this one has 5\)/);
    expect(short.text).toContain('value="not-an-email"');
    // A taken username is said beside the other problems, not once they are fixed.
    const { username } = await signedUp();
    const fresh = new Browser(t.baseUrl);
    await fresh.get('/signup');
    const taken = await fresh.post('/signup', {
      _csrf: fresh.csrf(),
      username,
      email: `${username}-again@example.test`,
      displayName: '',
      password: 'short',
    });
    expect(taken.status).toBe(400);
    expect(taken.text).toMatch(new RegExp(`<li>Username: &#39;${username}&#39; is taken; choose another.`));
    expect(taken.text).toMatch(/<li>Password: at least 15 characters/);
  });

  it('refuses the passwords an attacker tries first (NIST SP 800-63B), all reasons at once', async () => {
    const b = new Browser(t.baseUrl);
    await b.get('/signup');
    const username = uniqueName('pw');
    const weak: [string, RegExp][] = [
      [' '.repeat(15), /not only spaces/],
      ['1234567890', /at least 15 characters/],
      ['password12', /at least 15 characters/],
      ['passwordpassword', /would try it early/],
      ['1234567890123456', /would try it early/],
      ['aaaaaaaaaaaaaaab', /would try it early/],
      ['abcdefghijklmnopq1', /would try it early/],
      ['P4ssw0rd!P4ssw0rd!', /would try it early/],
      ['qwertyuiopasdfgh', /would try it early/],
      ['!QAZ2wsx#EDC4rfv', /would try it early/],
      [`${username}${username}`, /must not contain your username/],
      [`${[...username].join(' ')} lantern`, /must not contain your username/],
      ['my shipyard password', /name of this service/],
      ['sh1pyard lantern orbit', /name of this service/],
      [`${[...username].reverse().join('')} lantern orbit`, /must not contain your username/],
      ['a b c d e f g h i j k l m n o', /keys typed one after another/],
      ['1a2b3c4d5e6f7g8h9i', /keys typed one after another/],
      ['zaqxswcdevfrbgtnhy', /keys typed one after another/],
      ['Welcome2025!!!!!', /would try it early/],
      ['correct horse battery staple', /would try it early/],
    ];
    for (const [password, why] of weak) {
      const res = await b.post('/signup', {
        _csrf: b.csrf(),
        username,
        email: `${username}@example.test`,
        displayName: '',
        password,
      });
      expect(res.status, password).toBe(400);
      expect(res.text, password).toMatch(why);
      // Beside the field, each problem is a sentence of its own: "… a good one. An attacker would …".
      const beside = /<p class="error" id="new-password-error">([^<]*)<\/p>/.exec(res.text)?.[1];
      expect(beside, password).toMatch(/^[A-Z]/);
      expect(beside, password).not.toMatch(/\. [a-z]/);
    }
    expect(await t.db.orm.em.fork().count(User, { username })).toBe(0);
    const ok = await b.post('/signup', {
      _csrf: b.csrf(),
      username,
      email: `${username}@example.test`,
      displayName: '',
      password: 'lantern orbit velvet',
    });
    expect(ok.status).toBe(303);
  });

  it('signs in by username or email; a wrong password is a 401 page that names neither', async () => {
    const { username } = await signedUp();
    const b = new Browser(t.baseUrl, '127.0.0.1');
    await b.get('/signin');
    const wrong = await b.post('/signin', { _csrf: b.csrf(), login: username, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The username, email or password is not right.');
    const ok = await b.post('/signin', {
      _csrf: b.csrf(),
      login: `${username}@example.test`,
      password: 'a long enough password',
      next: '/docs',
    });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/docs');
    await b.get('/signin');
    const offsite = await b.post('/signin', {
      _csrf: b.csrf(),
      login: username,
      password: 'a long enough password',
      next: '//evil.example/',
    });
    expect(offsite.location).toBe('/settings/keys');
  });

  it("binds the CSRF token to the session: it changes at sign-in, and one session's token is void in another", async () => {
    const { b, username } = await signedUp();
    const mine = b.csrf();
    // The token is not the pre-session cookie, and not the cookie of this session either.
    expect(mine).not.toBe(b.cookies.get('shipyard_csrf'));
    expect(mine).not.toBe(b.cookies.get('shipyard_session'));
    const other = (await signedUp()).b;
    const stolen = await other.post('/settings/keys', {
      _csrf: mine,
      name: 'stolen',
      scopes: 'projects.read',
      expiry: '30',
    });
    expect(stolen.status).toBe(403);
    // Signing in again starts a new session: the token from before is void, the page's new one works.
    await b.post('/signout', { _csrf: mine });
    await b.get('/signin');
    const before = b.csrf();
    expect(
      (await b.post('/signin', { _csrf: before, login: username, password: 'a long enough password' })).status,
    ).toBe(303);
    expect(
      (await b.post('/settings/keys', { _csrf: before, name: 'old token', scopes: 'projects.read', expiry: '30' }))
        .status,
    ).toBe(403);
    expect(
      (await b.post('/settings/keys', { _csrf: mine, name: 'older token', scopes: 'projects.read', expiry: '30' }))
        .status,
    ).toBe(403);
    await b.get('/settings/keys');
    expect(b.csrf()).not.toBe(mine);
    expect(
      (await b.post('/settings/keys', { _csrf: b.csrf(), name: 'fresh token', scopes: 'projects.read', expiry: '30' }))
        .status,
    ).toBe(303);
    expect(
      await t.db.orm.em
        .fork()
        .count(ApiKey, { user: { username }, name: { $in: ['stolen', 'old token', 'older token'] } }),
    ).toBe(0);
  });

  it('refuses a form without the CSRF token, or from another site', async () => {
    const { b } = await signedUp();
    const missing = await b.post('/settings/keys', { name: 'x', scopes: 'projects.read', expiry: '30' });
    expect(missing.status).toBe(403);
    const crossSite = await b.post(
      '/settings/keys',
      { _csrf: b.csrf(), name: 'x', scopes: 'projects.read', expiry: '30' },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    const em = t.db.orm.em.fork();
    expect(await em.count(ApiKey, { name: 'x' })).toBe(0);
  });

  it('answers a NUL character in any form field with a page naming the field, never a 500', async () => {
    const { b, username } = await signedUp();
    const anon = new Browser(t.baseUrl);
    await anon.get('/signin');
    const cases: [Browser, string, Record<string, string>, string][] = [
      [anon, '/signin', { login: 'ada\u0000', password: 'whatever it is' }, 'login'],
      [
        anon,
        '/signup',
        { username: 'nul', email: 'nul@example.test', displayName: 'N\u0000', password: 'a long enough password' },
        'displayName',
      ],
      [b, '/settings/keys', { name: 'k\u0000', scopes: 'projects.read', expiry: '30' }, 'name'],
      [b, '/settings/profile', { displayName: 'Ada', bio: 'b\u0000', location: '', website: '', skills: '' }, 'bio'],
    ];
    for (const [who, path, form, name] of cases) {
      const res = await who.post(path, { _csrf: who.csrf(), ...form });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.text, path).toContain(`The field &quot;${name}&quot; contains a NUL character`);
    }
    expect(await t.db.orm.em.fork().count(ApiKey, { user: { username } })).toBe(0);
  });

  it('takes a form from the public address when a proxy passes its own address as Host', async () => {
    // The harness's PUBLIC_URL is http://localhost while requests go to 127.0.0.1:<port>, as
    // behind a proxy that rewrites Host: the browser's Origin names the public address.
    const { b } = await signedUp();
    const [viaProxy, otherPort, otherScheme] = [uniqueName(), uniqueName(), uniqueName()];
    const accepted = await b.post(
      '/settings/keys',
      { _csrf: b.csrf(), name: viaProxy, scopes: 'projects.read', expiry: '30' },
      { origin: 'http://localhost' },
    );
    expect((await shownOnce(b, accepted)).text).toMatch(/shipyard_pat_[A-Za-z0-9]+/);
    // Another port or scheme of that host is another origin.
    const port = await b.post(
      '/settings/keys',
      { _csrf: b.csrf(), name: otherPort, scopes: 'projects.read', expiry: '30' },
      { origin: 'http://localhost:8080' },
    );
    expect(port.status).toBe(403);
    const scheme = await b.post(
      '/settings/keys',
      { _csrf: b.csrf(), name: otherScheme, scopes: 'projects.read', expiry: '30' },
      { origin: 'https://localhost' },
    );
    expect(scheme.status).toBe(403);
    const em = t.db.orm.em.fork();
    expect(await em.count(ApiKey, { name: viaProxy })).toBe(1);
    expect(await em.count(ApiKey, { name: { $in: [otherPort, otherScheme] } })).toBe(0);
  });

  it('needs PUBLIC_URL to be an http(s) URL, the origin those forms are compared with', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://shipyard.example/' }).publicUrl).toBe('https://shipyard.example');
    expect(loadConfig({ PUBLIC_URL: '' }).publicUrl).toBe('http://localhost:3000');
    expect(() => loadConfig({ PUBLIC_URL: 'shipyard.example' })).toThrow(/PUBLIC_URL must be an http\(s\) URL/);
    expect(() => loadConfig({ PUBLIC_URL: 'https://' })).toThrow(/PUBLIC_URL must be an http\(s\) URL/);
  });
});

describe('Settings → Manage API keys', () => {
  it('requires a name, a scope and an expiry at most 366 days ahead', async () => {
    const { b } = await signedUp();
    const none = await b.post('/settings/keys', { _csrf: b.csrf(), name: '', expiry: 'never' });
    expect(none.status).toBe(400);
    expect(none.text).toContain('Name: give the key a name.');
    // Too long: said beside the field (described by it), like every other field's problem.
    const long = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'n'.repeat(101),
      scopes: 'profile.read',
      expiry: '7',
    });
    expect(long.status).toBe(400);
    expect(long.text).toContain('<p class="error" id="key-name-error">At most 100 characters (this one has 101).</p>');
    expect(long.text).toMatch(/id="key-name"[^>]*aria-describedby="key-name-hint key-name-error"/);
    expect(none.text).toContain('Scopes: choose at least one.');
    expect(none.text).toContain('every key expires');
    const far = new Date(Date.now() + 400 * 86_400_000).toISOString().slice(0, 10);
    const tooFar = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'far',
      scopes: 'projects.read',
      expiry: 'date',
      expiresOn: far,
    });
    expect(tooFar.status).toBe(400);
    expect(tooFar.text).toMatch(/366 days/);
    const soon = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const dated = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'dated',
      scopes: ['projects.read', 'jobs.read'],
      expiry: 'date',
      expiresOn: soon,
    });
    const datedPage = await shownOnce(b, dated);
    expect(datedPage.text).toContain('it will not be shown again');
    expect(datedPage.text).toContain(`Expires <span class="nowrap">${soon}</span>`);
    expect(datedPage.text).toContain('Scopes: Read jobs, Read projects.');
    // The date picker's own maximum is accepted; the day after is refused, naming the last allowed date.
    const form = await b.get('/settings/keys/new');
    const max = /id="key-expires-on"[^>]* max="(\d{4}-\d{2}-\d{2})"/.exec(form.text)![1]!;
    const atMax = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'longest',
      scopes: 'projects.read',
      expiry: 'date',
      expiresOn: max,
    });
    expect((await shownOnce(b, atMax)).text).toContain(`Expires <span class="nowrap">${max}</span>`);
    const dayAfter = new Date(Date.parse(`${max}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const beyond = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'beyond',
      scopes: 'projects.read',
      expiry: 'date',
      expiresOn: dayAfter,
    });
    expect(beyond.status).toBe(400);
    expect(beyond.text).toContain(`and ${max} at the latest`);
  });

  it('refuses a key beyond the 50 active ones an account may have, saying what to do', async () => {
    const { b, username } = await signedUp();
    const em = t.db.orm.em.fork();
    const user = await em.findOneOrFail(User, { username });
    for (let i = 0; i < 50; i++)
      await createKey(em.fork(), { userId: user.id, name: `k${i}`, scopes: ['projects.read'], expiresInDays: 1 });
    const res = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'one too many',
      scopes: 'projects.read',
      expiry: '30',
    });
    expect(res.status).toBe(409);
    expect(res.text).toContain('50 active API keys, the most it may have. Revoke one it no longer uses');
    expect(await em.count(ApiKey, { user: user.id })).toBe(50);
  });

  it('shows a new token once: a reload of its page shows the list with a notice, never a second key', async () => {
    const { b, username } = await signedUp();
    const shown = await shownOnce(
      b,
      await b.post('/settings/keys', { _csrf: b.csrf(), name: 'once', scopes: 'profile.read', expiry: '30' }),
    );
    const token = /shipyard_pat_[A-Za-z0-9]+/.exec(shown.text)![0];
    expect((await raw(t, 'GET', '/users/me', { token })).status).toBe(200);
    const reload = await b.get('/settings/keys/created');
    expect(reload.status).toBe(303);
    expect(reload.location).toBe('/settings/keys?notice=token-shown');
    const list = await b.get(reload.location!);
    expect(list.text).toContain('A new key&#39;s token is shown only once');
    // Only the page's own notices: anything else in the query shows none.
    for (const other of ['constructor', '__proto__', 'toString', '<b>x</b>'])
      expect((await b.get(`/settings/keys?notice=${encodeURIComponent(other)}`)).text).not.toContain('class="notice"');
    expect(list.text).not.toContain(token);
    expect(await t.db.orm.em.fork().count(ApiKey, { user: { username } })).toBe(1);
    // The flash is sealed with the session's cookie secret: the table never holds the token.
    const rows = await t.db.orm.em.fork().find(Session, { user: { username } });
    expect(JSON.stringify(rows)).not.toContain(token.slice('shipyard_pat_'.length));
    // Another session of the same person finds nothing to show.
    const other = new Browser(t.baseUrl);
    await other.get('/signin');
    await other.post('/signin', { _csrf: other.csrf(), login: username, password: 'a long enough password' });
    await b.post('/settings/keys', { _csrf: b.csrf(), name: 'second', scopes: 'profile.read', expiry: '30' });
    expect((await other.get('/settings/keys/created')).location).toBe('/settings/keys?notice=token-shown');
    expect((await b.get('/settings/keys/created')).text).toMatch(/shipyard_pat_/);
  });

  it('lists active keys (expiring ones flagged) apart from revoked and expired ones', async () => {
    const { b, username } = await signedUp();
    const user = await t.db.orm.em.fork().findOneOrFail(User, { username });
    const shown = await shownOnce(
      b,
      await b.post('/settings/keys', { _csrf: b.csrf(), name: 'mine', scopes: 'profile.read', expiry: '7' }),
    );
    const token = /shipyard_pat_[A-Za-z0-9]+/.exec(shown.text)![0];
    await createKey(t.db.orm.em.fork(), {
      userId: user.id,
      name: 'long-lived',
      scopes: ['jobs.read'],
      expiresInDays: 90,
    });
    const doomed = await createKey(t.db.orm.em.fork(), {
      userId: user.id,
      name: 'doomed',
      scopes: ['projects.read'],
      expiresInDays: 30,
    });
    const list = await b.get('/settings/keys');
    expect(list.text).toContain('<a class="button" href="/settings/keys/new">Generate new key</a>');
    expect(list.text).not.toContain('<form method="post" action="/settings/keys"');
    expect(list.text).toContain(`…${token.slice(-4)}`);
    expect(list.text).toContain('Read profile');
    expect(list.text).not.toContain(token);
    // Every key is active so far: the whole page is the active list.
    const active = list.text;
    expect(active).toMatch(/mine<\/bdi><\/td>[\s\S]*?<span class="hint">expires in [67] days/);
    expect(/long-lived<\/bdi><\/td>[\s\S]*?<\/tr>/.exec(active)![0]).not.toContain('expires in');
    // Near its end (3 days or less) a key is in the warning colour; the keys about to end come first.
    await createKey(t.db.orm.em.fork(), { userId: user.id, name: 'ending', scopes: ['jobs.read'], expiresInDays: 2 });
    const ordered = (await b.get('/settings/keys')).text;
    expect(ordered).toMatch(/ending<\/bdi><\/td>[\s\S]*?<span class="soon">expires in 2 days/);
    // A key chosen to last until the end of tomorrow expires tomorrow, whatever the hour now.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'one more day',
      scopes: 'profile.read',
      expiry: 'date',
      expiresOn: tomorrow,
    });
    expect((await b.get('/settings/keys')).text).toMatch(
      /one more day<\/bdi><\/td>[\s\S]*?<span class="soon">expires tomorrow</,
    );
    const rows = [...ordered.matchAll(/<td data-label="Name"><bdi>([^<]+)<\/bdi>/g)].map((m) => m[1]);
    expect(rows.slice(0, 2)).toEqual(['ending', 'mine']);
    expect(list.text).not.toContain('Inactive keys');

    const confirm = await b.get(`/settings/keys/${doomed.key.id}/revoke`);
    expect(confirm.text).toContain('Revoke the key "<bdi>doomed</bdi>"?');
    const revoked = await b.post(`/settings/keys/${doomed.key.id}/revoke`, { _csrf: b.csrf() });
    expect(revoked.status).toBe(303);
    const after = await b.get(revoked.location!);
    expect(after.text).toContain('The key &quot;doomed&quot; is revoked.');
    // The confirmation reached again with Back: the key as it is now, and no button to press.
    const back = await b.get(`/settings/keys/${doomed.key.id}/revoke`);
    expect(back.text).toContain('The key "<bdi>doomed</bdi>" is revoked');
    expect(back.text).not.toContain('Revoke key</button>');
    const inactive = after.text.slice(after.text.indexOf('Inactive keys'));
    expect(inactive).toMatch(
      /doomed<\/bdi><\/td>[\s\S]*?revoked <span class="nowrap">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/span>/,
    );
    expect(after.text.slice(after.text.indexOf('Active keys'), after.text.indexOf('Inactive keys'))).not.toContain(
      'doomed',
    );
    // A phone's card labels every cell; the revoke link's cell has no empty label.
    expect(after.text).not.toContain('data-label="Action"');
  });

  it('regenerates a key: a new secret, same name, scopes and lifetime, the old one stopped at once or after an overlap', async () => {
    const { b, username } = await signedUp();
    const user = await t.db.orm.em.fork().findOneOrFail(User, { username });
    const old = await createKey(t.db.orm.em.fork(), {
      userId: user.id,
      name: 'deploy bot',
      scopes: ['projects.read', 'content.read'],
      expiresInDays: 30,
    });
    expect((await raw(t, 'GET', '/projects', { token: old.token })).status).toBe(200);
    const list = await b.get('/settings/keys');
    expect(list.text).toContain(`href="/settings/keys/${old.key.id}/regenerate"`);
    const confirm = await b.get(`/settings/keys/${old.key.id}/regenerate`);
    expect(confirm.text).toContain('Regenerate the key "<bdi>deploy bot</bdi>"?');
    expect(confirm.text).toContain('lasting 30 days from now');
    // A choice the form does not offer changes nothing.
    const refused = await b.post(`/settings/keys/${old.key.id}/regenerate`, { _csrf: b.csrf(), overlap: '5' });
    expect(refused.status).toBe(400);
    expect((await raw(t, 'GET', '/projects', { token: old.token })).status).toBe(200);

    // At once: the old secret is refused, the new one works with the same scopes.
    const shown = await shownOnce(
      b,
      await b.post(`/settings/keys/${old.key.id}/regenerate`, { _csrf: b.csrf(), overlap: '0' }),
    );
    expect(shown.text).toContain('no longer works');
    const token = /shipyard_pat_[A-Za-z0-9]+/.exec(shown.text)![0];
    expect(token).not.toBe(old.token);
    expect((await raw(t, 'GET', '/projects', { token: old.token })).status).toBe(401);
    expect((await raw(t, 'GET', '/projects', { token })).status).toBe(200);
    expect((await raw(t, 'GET', '/jobs', { token })).status).toBe(403);
    const keys = await t.db.orm.em
      .fork()
      .find(ApiKey, { user: user.id, name: 'deploy bot' }, { orderBy: { id: 'asc' } });
    expect(keys).toHaveLength(2);
    expect(keys[1]!.scopes).toEqual(['content.read', 'projects.read']);
    expect(Math.round((keys[1]!.expiresAt.getTime() - Date.now()) / 86_400_000)).toBe(30);
    // The revoked one cannot be regenerated again: nothing to replace.
    const again = await b.post(`/settings/keys/${old.key.id}/regenerate`, { _csrf: b.csrf(), overlap: '0' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('is revoked');

    // With an overlap: the old secret keeps working until then, and says so.
    const overlapped = await shownOnce(
      b,
      await b.post(`/settings/keys/${keys[1]!.id}/regenerate`, { _csrf: b.csrf(), overlap: '1' }),
    );
    expect(overlapped.text).toContain('keeps working until');
    expect((await raw(t, 'GET', '/projects', { token })).status).toBe(200);
    const ending = await t.db.orm.em.fork().findOneOrFail(ApiKey, { id: keys[1]!.id });
    expect(ending.revokedAt).toBeNull();
    expect(ending.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(ending.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    // Once only: the key in its overlap says so, and a second regenerate (a double click) makes nothing.
    expect((await b.get('/settings/keys')).text).toMatch(/regenerated; stops/);
    const twice = await b.post(`/settings/keys/${keys[1]!.id}/regenerate`, { _csrf: b.csrf(), overlap: '1' });
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('was regenerated already');
    expect(await t.db.orm.em.fork().count(ApiKey, { user: user.id, name: 'deploy bot' })).toBe(3);

    // A key an app got through OAuth is renewed by signing in from the app again.
    const app = await createKey(t.db.orm.em.fork(), {
      userId: user.id,
      name: 'Claude',
      scopes: ['projects.read'],
      expiresInDays: 30,
      oauthClientId: 'https://claude.example/client.json',
    });
    expect((await b.get('/settings/keys')).text).not.toContain(`/settings/keys/${app.key.id}/regenerate`);
    const oauth = await b.get(`/settings/keys/${app.key.id}/regenerate`);
    expect(oauth.status).toBe(409);
    expect(oauth.text).toContain('sign in from that app again');
    expect((await b.post(`/settings/keys/${app.key.id}/regenerate`, { _csrf: b.csrf(), overlap: '0' })).status).toBe(
      409,
    );
    expect((await raw(t, 'GET', '/projects', { token: app.token })).status).toBe(200);
  });

  it("another person's key cannot be revoked or regenerated (404)", async () => {
    const { b } = await signedUp();
    const other = await userWithKey(t, ['profile.read']);
    const otherKey = await t.db.orm.em.fork().findOneOrFail(ApiKey, { user: other.user.id });
    expect((await b.get(`/settings/keys/${otherKey.id}/revoke`)).status).toBe(404);
    expect((await b.post(`/settings/keys/${otherKey.id}/revoke`, { _csrf: b.csrf() })).status).toBe(404);
    expect((await b.post(`/settings/keys/${otherKey.id}/regenerate`, { _csrf: b.csrf(), overlap: '0' })).status).toBe(
      404,
    );
    expect((await raw(t, 'GET', '/users/me', { token: other.token })).status).toBe(200);
  });

  it('previews the expiry a choice gives on the form', async () => {
    const { b } = await signedUp();
    const form = await b.get('/settings/keys/new');
    const in30 = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const in30b = new Date(Date.now() + 30 * 86_400_000 + 60_000).toISOString().slice(0, 10);
    expect(form.text).toMatch(new RegExp(`id="expiry-preview"[^>]*>The key expires on (${in30}|${in30b}) \\(UTC\\)`));
  });
});

describe('Settings → Profile and Settings → GitHub', () => {
  it('saves the profile, refusing a bad website with the reason', async () => {
    const { b, username } = await signedUp();
    const bad = await b.post('/settings/profile', {
      _csrf: b.csrf(),
      displayName: 'Ada L',
      bio: 'Engines',
      location: '',
      website: 'javascript:alert(1)',
      skills: 'rust',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/Website: an http/);
    const ok = await b.post('/settings/profile', {
      _csrf: b.csrf(),
      displayName: 'Ada L',
      bio: 'Engines & <looms>',
      location: 'London',
      website: 'https://ada.example',
      skills: 'Rust, TypeScript',
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Engines &amp; &lt;looms&gt;');
    const user = await t.db.orm.em.fork().findOneOrFail(User, { username });
    expect(user).toMatchObject({
      displayName: 'Ada L',
      location: 'London',
      website: 'https://ada.example',
      skills: ['rust', 'typescript'],
    });
  });

  it('links a GitHub login, proves it through the bio, and syncs it, from the local fake of GitHub', async () => {
    const { b } = await signedUp();
    gh.accounts.set('octo-web', {
      login: 'octo-web',
      name: 'Octo',
      repos: [
        {
          name: 'engine',
          language: 'Rust',
          stars: 3,
          pushedAt: '2026-11-01T00:00:00Z',
          languages: { Rust: 1000 },
          weekly: [1, 2, 3],
        },
      ],
    });
    expect((await b.post('/settings/github', { _csrf: b.csrf(), login: 'not a login!' })).status).toBe(400);
    const linked = await b.post('/settings/github', { _csrf: b.csrf(), login: 'octo-web' });
    expect(linked.text).toContain('Linked to octo-web');
    expect(linked.text).toContain('<strong>unverified</strong>');
    const code = /<code id="gh-code">(shipyard-verify-[0-9a-f]+)<\/code>/.exec(linked.text)?.[1];
    expect(code).toBeDefined();
    expect((await b.post('/settings/github/sync', { _csrf: b.csrf() })).status).toBe(400); // not before the proof
    const early = await b.post('/settings/github/verify', { _csrf: b.csrf() });
    expect(early.status).toBe(400);
    expect(early.text).toContain(`does not contain ${code}`);
    gh.accounts.get('octo-web')!.bio = `Rust and engines. ${code}`;
    const verified = await b.post('/settings/github/verify', { _csrf: b.csrf() });
    expect(verified.status).toBe(200);
    expect(verified.text).toContain('Verified: octo-web is yours');
    expect(verified.text).toContain('(verified)');
    const synced = await b.post('/settings/github/sync', { _csrf: b.csrf() });
    expect(synced.status).toBe(200);
    expect(synced.text).toContain('Synced.');
    expect(synced.text).toContain('Sync status: <strong>ok</strong>');
  });
});

/** An administrator, signed in, on the moderation page. */
async function admin(): Promise<Browser> {
  const username = uniqueName();
  await createUser(t.db.orm.em.fork(), {
    username,
    email: `${username}@example.test`,
    password: 'moderator of engines and looms',
    admin: true,
  });
  const b = new Browser(t.baseUrl);
  await b.get('/signin');
  expect(
    (await b.post('/signin', { _csrf: b.csrf(), login: username, password: 'moderator of engines and looms' })).status,
  ).toBe(303);
  await b.get('/admin/moderation');
  return b;
}

describe('moderation (session only)', () => {
  it('hides and unhides a post and a comment through the API with a session and the CSRF header; keys are refused', async () => {
    const author = await userWithKey(t);
    const post = (
      await raw(t, 'POST', '/posts', { token: author.token, body: { kind: 'post', title: 'Spam', body: 'buy now' } })
    ).json;
    const comment = (
      await raw(t, 'POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: 'spam too' } })
    ).json;
    const b = await admin();
    const session = { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    const noCsrf = await raw(t, 'POST', `/admin/posts/${post.id}/hide`, { headers: session });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.type).toMatch(/csrf-token-required$/);
    // The pre-session cookie's value (what double-submit used to take) is not the token.
    expect(
      (
        await raw(t, 'POST', `/admin/posts/${post.id}/hide`, {
          headers: { ...session, 'x-csrf-token': b.cookies.get('shipyard_csrf') ?? 'x' },
        })
      ).status,
    ).toBe(403);
    const withCsrf = { ...session, 'x-csrf-token': b.csrf() };
    const hidden = await raw(t, 'POST', `/admin/posts/${post.id}/hide`, { headers: withCsrf });
    expect(hidden.status).toBe(200);
    expect(hidden.json.hidden).toBe(true);
    const reader = await userWithKey(t, ['content.read']);
    expect((await raw(t, 'GET', `/posts/${post.id}`, { token: reader.token })).status).toBe(404);
    expect((await raw(t, 'POST', `/admin/posts/${post.id}/unhide`, { headers: withCsrf })).json.hidden).toBe(false);
    expect((await raw(t, 'GET', `/posts/${post.id}`, { token: reader.token })).status).toBe(200);
    expect((await raw(t, 'POST', `/admin/comments/${comment.id}/hide`, { headers: withCsrf })).json).toMatchObject({
      hidden: true,
      body: null,
    });
    expect((await raw(t, 'POST', `/admin/comments/${comment.id}/unhide`, { headers: withCsrf })).json).toMatchObject({
      hidden: false,
      body: 'spam too',
    });

    const adminKey = await userWithKey(t, undefined, { admin: true });
    const byKey = await raw(t, 'POST', `/admin/posts/${post.id}/hide`, { token: adminKey.token });
    expect(byKey.status).toBe(403);
    // The contract's 403 for these says what is sent: the problem, and no budget headers (none is spent).
    const declared = loadContract().paths['/admin/posts/{postId}/hide'] as {
      post: { parameters: { $ref: string }[]; responses: Record<string, { $ref?: string }> };
    };
    expect(declared.post.parameters.map((p) => p.$ref)).toContain('#/components/parameters/CsrfToken');
    expect(declared.post.responses['403']!.$ref).toBe('#/components/responses/SessionOnlyForbidden');
    const forbidden = (
      loadContract().components as {
        responses: Record<
          string,
          { headers: Record<string, unknown>; content: Record<string, { example: { type: string } }> }
        >;
      }
    ).responses.SessionOnlyForbidden!;
    // A key and a missing CSRF token are refused before any budget is spent; the contract declares no key header.
    for (const res of [byKey, noCsrf])
      for (const name of ['ratelimit', 'ratelimit-policy', 'shipyard-key-expiration'])
        expect(res.headers.get(name), name).toBeNull();
    expect(Object.keys(forbidden.headers).map((h) => h.toLowerCase())).not.toContain('shipyard-key-expiration');
    expect(byKey.json.type).toBe(forbidden.content['application/problem+json']!.example.type);
    expect((await t.db.orm.em.fork().findOneOrFail(Post, { id: post.id })).hiddenAt).toBeNull();
    expect((await raw(t, 'POST', `/admin/posts/${post.id}/hide`)).status).toBe(401);
  });

  it('lets an administrator hide from the moderation page, and nobody else', async () => {
    const author = await userWithKey(t);
    const post = (
      await raw(t, 'POST', '/posts', { token: author.token, body: { kind: 'post', title: 'Page spam', body: 'x' } })
    ).json;
    const comment = (
      await raw(t, 'POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: 'Comment spam' } })
    ).json;
    const b = await admin();
    // The newest posts and comments are listed to act on, no id to copy.
    const listed = await b.get('/admin/moderation');
    const postRow = new RegExp(`<bdi>Page spam</bdi> <code class="hint">${post.id}</code>[\\s\\S]*?</tr>`).exec(
      listed.text,
    )![0];
    expect(postRow).toContain('visible');
    expect(postRow).toContain(`name="id" value="${post.id}"><input type="hidden" name="action" value="hide">`);
    expect(listed.text).toMatch(new RegExp(`<bdi>Comment spam</bdi> <code class="hint">${comment.id}</code>`));
    const done = await b.post('/admin/moderation', { _csrf: b.csrf(), kind: 'post', id: post.id, action: 'hide' });
    expect(done.status).toBe(200);
    expect(done.text).toContain(`The post ${post.id} is hidden`);
    const hiddenRow = new RegExp(`<bdi>Page spam</bdi> <code class="hint">${post.id}</code>[\\s\\S]*?</tr>`).exec(
      done.text,
    )![0];
    expect(hiddenRow).toMatch(/hidden <span class="nowrap">/);
    expect(hiddenRow).toContain('value="unhide"');
    const { b: plain } = await signedUp();
    expect((await plain.get('/admin/moderation')).status).toBe(403);
    expect(
      (await plain.post('/admin/moderation', { _csrf: plain.csrf(), kind: 'post', id: post.id, action: 'unhide' }))
        .status,
    ).toBe(403);
    expect((await t.db.orm.em.fork().findOneOrFail(Post, { id: post.id })).hiddenAt).not.toBeNull();
  });
});

describe('text people write, in pages', () => {
  it('isolates it, so a bidi override in a comment cannot reverse the id, the author or the button after it', async () => {
    const author = await userWithKey(t);
    const post = (await raw(t, 'POST', '/posts', { token: author.token, body: { title: 'Plain', body: 'x' } })).json;
    // Body text keeps what its author wrote, bidi controls included; names refuse them.
    const sneaky = 'looks fine \u202egnp.exe';
    const comment = await raw(t, 'POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: sneaky } });
    expect(comment.status).toBe(201);
    const page = (await (await admin()).get('/admin/moderation')).text;
    expect(page).toContain(`<bdi>${sneaky}</bdi> <code class="hint">${comment.json.id}</code>`);
    expect(page).toContain(`<bdi>${author.user.username}</bdi>`);
    // Every place the override appears is inside an isolate.
    expect(page.split('\u202e').length - 1).toBe(page.match(/<bdi>[^<]*\u202e[^<]*<\/bdi>/g)?.length);
  });
});

describe('the sign-in budget', () => {
  it('answers 429 with Retry-After after repeated failed sign-ins and sign-ups from one address', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 3 });
    try {
      const b = new Browser(own.baseUrl);
      await b.get('/signin');
      const statuses: number[] = [];
      // A wrong password, a refused sign-up (a weak password), a taken name: each spends the budget.
      statuses.push((await b.post('/signin', { _csrf: b.csrf(), login: 'nobody', password: 'wrong password' })).status);
      statuses.push(
        (
          await b.post('/signup', {
            _csrf: b.csrf(),
            username: 'weak',
            email: 'weak@example.test',
            password: 'password',
          })
        ).status,
      );
      statuses.push((await b.post('/signin', { _csrf: b.csrf(), login: 'nobody', password: 'wrong again' })).status);
      const res = await b.post('/signin', { _csrf: b.csrf(), login: 'nobody', password: 'and again' });
      expect(statuses).toEqual([401, 400, 401]);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.text).toContain('Too many sign-in attempts from this address, or for this account');
      // The wait in words a person reads, and the way back; not a count of seconds.
      expect(res.text).toMatch(/Try again in (about \d+ minutes?|\d+ seconds?)\./);
      expect(res.text).not.toMatch(/retry in \d+ seconds/);
      expect(res.text).toContain('<a href="/signin">Back to the form</a>');
    } finally {
      await own.close();
    }
  });

  it('spends a unit on every sign-up, made or refused, and gives a successful sign-in its unit back', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 3 });
    try {
      const b = new Browser(own.baseUrl);
      await b.get('/signup');
      const made: string[] = [];
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) {
        const username = uniqueName('made');
        const res = await b.post('/signup', {
          _csrf: b.csrf(),
          username,
          email: `${username}@example.test`,
          password: 'velvet quasar lantern 71 umbrella',
        });
        statuses.push(res.status);
        made.push(username);
        await b.post('/signout', { _csrf: b.csrf() });
        await b.get('/signin');
      }
      // Signing in, as often as one likes, costs nothing once it succeeds.
      for (let i = 0; i < 4; i++) {
        const res = await b.post('/signin', {
          _csrf: b.csrf(),
          login: made[0]!,
          password: 'velvet quasar lantern 71 umbrella',
        });
        statuses.push(res.status);
        await b.post('/signout', { _csrf: b.csrf() });
        await b.get('/signin');
      }
      const third = uniqueName('made');
      const last = await b.post('/signup', {
        _csrf: b.csrf(),
        username: third,
        email: `${third}@example.test`,
        password: 'velvet quasar lantern 71 umbrella',
      });
      statuses.push(last.status);
      // The address's budget is spent: a browser that never signed in to the account is refused.
      const stranger = new Browser(own.baseUrl);
      await stranger.get('/signin');
      const refused = await stranger.post('/signin', {
        _csrf: stranger.csrf(),
        login: made[0]!,
        password: 'not the password',
      });
      expect(statuses).toEqual([303, 303, 303, 303, 303, 303, 303]);
      expect(refused.status).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('cannot be used by others at the same address to lock out a person signing in from their own browser', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 3 });
    try {
      const password = 'velvet quasar lantern 71 umbrella';
      const username = uniqueName('office');
      await createUser(own.db.orm.em.fork(), { username, email: `${username}@example.test`, password });
      // The person signs in once from their browser, which is remembered, and signs out.
      const mine = new Browser(own.baseUrl);
      await mine.get('/signin');
      expect((await mine.post('/signin', { _csrf: mine.csrf(), login: username, password })).status).toBe(303);
      expect(mine.cookies.get('shipyard_device')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await mine.post('/signout', { _csrf: mine.csrf() });
      await mine.get('/signin');
      // Someone behind the same address guesses at that account, and at others, until refused.
      const attacker = new Browser(own.baseUrl);
      await attacker.get('/signin');
      const guesses: number[] = [];
      for (let i = 0; i < 5; i++)
        guesses.push(
          (await attacker.post('/signin', { _csrf: attacker.csrf(), login: username, password: `guess ${i}` })).status,
        );
      expect(guesses).toEqual([401, 401, 401, 429, 429]);
      // A new browser at that address is refused too (the address's budget is spent)…
      const elsewhere = new Browser(own.baseUrl);
      await elsewhere.get('/signin');
      expect((await elsewhere.post('/signin', { _csrf: elsewhere.csrf(), login: username, password })).status).toBe(
        429,
      );
      // …but the person's own browser signs in, with the right password.
      const back = await mine.post('/signin', { _csrf: mine.csrf(), login: username, password });
      expect(back.status).toBe(303);
      // The remembered browser has its own budget: wrong passwords from it run out too.
      await mine.post('/signout', { _csrf: mine.csrf() });
      await mine.get('/signin');
      const fromMine: number[] = [];
      for (let i = 0; i < 4; i++)
        fromMine.push(
          (await mine.post('/signin', { _csrf: mine.csrf(), login: username, password: `typo ${i}` })).status,
        );
      expect(fromMine).toEqual([401, 401, 401, 429]);
      // A device cookie is for its own account only: naming another account spends the address's budget.
      expect((await mine.post('/signin', { _csrf: mine.csrf(), login: 'someone-else', password: 'x' })).status).toBe(
        429,
      );
    } finally {
      await own.close();
    }
  });

  it('bounds guesses at one account from many addresses, by username and email alike', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 2, trustProxy: ['loopback'] });
    try {
      const username = uniqueName('target');
      const password = 'velvet quasar lantern 71 umbrella';
      await createUser(own.db.orm.em.fork(), { username, email: `${username}@example.test`, password });
      const from = async (address: string, login: string, pass: string) => {
        const b = new Browser(own.baseUrl);
        await b.get('/signin');
        return (await b.post('/signin', { _csrf: b.csrf(), login, password: pass }, { 'x-forwarded-for': address }))
          .status;
      };
      // Each address may try twice; the account takes five times that, whichever login names it.
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push(await from(`203.0.113.${i}`, i % 2 ? username : `${username}@example.test`, `guess ${i}`));
      expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
      expect(await from('198.51.100.1', username, password)).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('says a username is taken, and that an email is registered (bounded by the sign-up budget)', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 10 });
    try {
      const username = uniqueName('taken');
      await createUser(own.db.orm.em.fork(), { username, email: `${username}@example.test` });
      const b = new Browser(own.baseUrl);
      await b.get('/signup');
      const password = 'velvet quasar lantern 71 umbrella';
      const sameName = await b.post('/signup', { _csrf: b.csrf(), username, email: 'new@example.test', password });
      expect(sameName.status).toBe(409);
      expect(sameName.text).toContain(`Username: &#39;${username}&#39; is taken; choose another.`);
      const sameEmail = await b.post('/signup', {
        _csrf: b.csrf(),
        username: uniqueName('fresh'),
        email: `${username}@example.test`,
        password,
      });
      expect(sameEmail.status).toBe(409);
      expect(sameEmail.text).toContain('Email: an account already uses this address.');
    } finally {
      await own.close();
    }
  });

  it('checks no more sign-ups than the budget holds when they are sent all at once', async () => {
    const own = await startServer({ signInAttemptsPer15Minutes: 4 });
    try {
      const b = new Browser(own.baseUrl);
      await b.get('/signup');
      const statuses = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const res = await b.post('/signup', {
            _csrf: b.csrf(),
            username: `burst${i}`,
            email: `burst${i}@example.test`,
            password: 'passwordpassword',
          });
          return res.status;
        }),
      );
      expect(statuses.filter((s) => s === 400)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    } finally {
      await own.close();
    }
  });
});

describe('a busy password thread', () => {
  it('gives the sign-up form back, filled in, with a 503 to retry; nothing is made', async () => {
    const own = await startServer({ passwordChecksWaiting: 0 });
    try {
      const b = new Browser(own.baseUrl);
      await b.get('/signup');
      const username = uniqueName('busy');
      for (let i = 0; i < 2; i++) {
        const res = await b.post('/signup', {
          _csrf: b.csrf(),
          username,
          email: `${username}@example.test`,
          displayName: 'Busy Person',
          password: 'velvet quasar lantern 71 umbrella',
        });
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        expect(res.text).toContain('Too many passwords are being checked right now; nothing was changed.');
        expect(res.text).toContain(`value="${username}"`);
        expect(res.text).toContain('value="Busy Person"');
        expect(res.text).not.toContain('velvet quasar');
      }
      expect(await own.db.orm.em.fork().count(User, { username })).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe('/docs', () => {
  it('serves its icon at /favicon.ico and links it from every page', async () => {
    for (const path of ['/favicon.ico', '/assets/favicon.svg']) {
      const res = await fetch(`${t.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await res.text()).toMatch(/^<svg /);
    }
    const signin = await (await fetch(`${t.baseUrl}/signin`)).text();
    expect(signin).toContain('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">');
  });

  it('serves the reference renderer from here, under a CSP that names no other host, with the header of every page', async () => {
    const res = await fetch(`${t.baseUrl}/docs`);
    const text = await res.text();
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/https?:|\*/);
    expect(text).toContain('href="/api/v1/openapi.json"');
    expect(text).toContain('<noscript>');
    const scripts = [...text.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.every((src) => src.startsWith('/assets/'))).toBe(true);
    expect(text).not.toMatch(/<link[^>]+href="https?:/);
    // The renderer: compressed, cached for a year under a versioned path.
    const bundlePath = scripts.find((src) => src.startsWith('/assets/scalar/'))!;
    expect(bundlePath).toMatch(/^\/assets\/scalar\/\d+\.\d+\.\d+\/standalone\.js$/);
    const bundle = await fetch(`${t.baseUrl}${bundlePath}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-encoding')).toBe('gzip');
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await bundle.text()).length).toBeGreaterThan(1_000_000);
    // Signed in, the header is the one every other page has.
    const { b, username } = await signedUp();
    const signedIn = await b.get('/docs');
    expect(signedIn.text).toContain(`Sign out <bdi>${username}</bdi>`);
    expect(signedIn.text).not.toContain('href="/signup"');
  });
});

describe('/docs/problems', () => {
  it("explains every problem type of the contract's catalogue and its codes, and a type URI's path leads there", async () => {
    const catalogue = (loadContract() as unknown as { 'x-problem-types': { slug: string; title: string }[] })[
      'x-problem-types'
    ];
    const index = await fetch(`${t.baseUrl}/docs/problems`);
    expect(index.status).toBe(200);
    const text = await index.text();
    for (const { slug } of catalogue) expect(text).toContain(`href="/docs/problems/${slug}"`);
    // A real answer's type leads to its page, which names that type.
    const refused = await raw(t, 'GET', '/users/me');
    const slug = (refused.json.type as string).split('/').at(-1)!;
    const page = await fetch(`${t.baseUrl}/docs/problems/${slug}`);
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain(`<code>${refused.json.type}</code>`);
    expect(body).toContain(`<h1>${catalogue.find((e) => e.slug === slug)!.title}</h1>`);
    // The type is a reference: resolved against the request's URL (RFC 9457), it opens on this server.
    const viaUri = await fetch(new URL(refused.json.type as string, `${t.apiUrl}/users/me`), { redirect: 'manual' });
    expect(viaUri.status).toBe(301);
    expect(viaUri.headers.get('location')).toBe(`/docs/problems/${slug}`);
    // Each type's page lists the codes that refine it, each with an anchor of its own.
    const conflicts = await (await fetch(`${t.baseUrl}/docs/problems/conflict`)).text();
    const codes = (loadContract() as unknown as { 'x-problem-codes': { code: string; types: string[] }[] })[
      'x-problem-codes'
    ];
    for (const { code, types } of codes)
      if (types.includes('conflict')) expect(conflicts).toContain(`<code id="${code}">${code}</code>`);
      else expect(conflicts).not.toContain(`id="${code}"`);
    const unknown = await fetch(`${t.baseUrl}/docs/problems/no-such-type`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('the start page', () => {
  it('says what Shipyard is and shows the ways in, signed out and signed in', async () => {
    const stranger = new Browser(t.baseUrl);
    const out = await stranger.get('/');
    expect(out.status).toBe(200);
    expect(out.text).toContain('<h1>Shipyard</h1>');
    for (const link of ['/signup', '/signin', '/docs', '/api/v1/openapi.json'])
      expect(out.text).toContain(`href="${link}"`);
    const signUp = await stranger.get('/signup');
    expect(signUp.text).toContain('Display name (optional)');
    const { b } = await signedUp();
    const inside = await b.get('/');
    expect(inside.text).toContain('href="/settings/keys"');
    expect(inside.text).not.toContain('href="/signup"');
  });
});

describe('the key form', () => {
  it('groups the scopes by area and starts from a preset', async () => {
    const { b } = await signedUp();
    const ticked = (text: string) => [...text.matchAll(/value="([a-z.]+)" checked/g)].map((m) => m[1]).sort();
    const plain = await b.get('/settings/keys/new');
    expect(ticked(plain.text)).toEqual([]);
    const legends = [...plain.text.matchAll(/<fieldset class="scope-area"><legend>([^<]+)</g)].map((m) => m[1]);
    expect(legends).toEqual([
      'Posts and comments',
      'Jobs',
      'Profiles',
      'Projects, roadmaps and build logs',
      'GitHub Insight',
      'Opportunity radar',
    ]);
    const mcp = await b.get('/settings/keys/new?preset=mcp');
    expect(ticked(mcp.text)).toEqual(['content.write', 'projects.read', 'projects.write']);
    expect(mcp.text).toContain('name="name" maxlength="100" required value="MCP"');
    const read = await b.get('/settings/keys/new?preset=read');
    expect(ticked(read.text)).toEqual([
      'content.read',
      'github.read',
      'jobs.read',
      'profile.read',
      'projects.read',
      'radar.read',
    ]);
    expect(ticked((await b.get('/settings/keys/new?preset=admin')).text)).toEqual([]);
  });
});

describe('a wait in words', () => {
  it('says seconds, minutes or hours as a person would', async () => {
    const { waitInWords } = await import('../src/web/web.routes.js');
    expect(waitInWords(1)).toBe('in 1 second');
    expect(waitInWords(40)).toBe('in 40 seconds');
    expect(waitInWords(703)).toBe('in about 12 minutes');
    expect(waitInWords(60)).toBe('in about 1 minute');
    expect(waitInWords(7200)).toBe('in about 2 hours');
  });
});

describe('form errors', () => {
  it('mark each field beside it, and keep what was typed but the password', async () => {
    const { b } = await signedUp();
    await b.get('/settings/keys/new');
    const key = await b.post('/settings/keys', { _csrf: b.csrf(), name: ' ', scopes: [], expiry: '7' });
    expect(key.status).toBe(400);
    expect(key.text).toMatch(
      /<input type="text" id="key-name"[^>]*aria-describedby="key-name-hint key-name-error" aria-invalid="true">/,
    );
    expect(key.text).toContain('<p class="error" id="key-name-error">Give the key a name.</p>');
    expect(key.text).toMatch(/<fieldset aria-describedby="key-scopes-error" aria-invalid="true"><legend>Scopes/);
    expect(key.text).toContain('<option value="7" selected>');
    expect(key.text).not.toMatch(/id="key-expiry"[^>]*aria-invalid/);

    const stranger = new Browser(t.baseUrl);
    await stranger.get('/signup');
    const bad = await stranger.post('/signup', {
      _csrf: stranger.csrf(),
      username: 'Not Valid',
      email: 'someone@example.test',
      password: 'short',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(
      /id="username"[^>]*value="Not Valid" aria-describedby="username-hint username-error" aria-invalid="true"/,
    );
    expect(bad.text).toMatch(/id="email"[^>]*value="someone@example.test"(?![^>]*aria-invalid)/);
    expect(bad.text).toMatch(/id="new-password"[^>]*aria-invalid="true"/);
    expect(bad.text).toContain('id="new-password-error"');
    expect(bad.text).not.toContain('value="short"');
  });
});

describe('a key for a date out of range', () => {
  it('is refused with the form’s other problems at once, not after they are fixed', async () => {
    const { b } = await signedUp();
    await b.get('/settings/keys/new');
    const res = await b.post('/settings/keys', { _csrf: b.csrf(), name: '', expiry: 'date', expiresOn: '2020-01-01' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('<p class="error" id="key-name-error">Give the key a name.</p>');
    expect(res.text).toContain('<li>Scopes: choose at least one.</li>');
    expect(res.text).toMatch(/<p class="error" id="key-expires-on-error">A key&#39;s date is after today/);
  });

  it('is refused beside the date field, with the range', async () => {
    const { b } = await signedUp();
    await b.get('/settings/keys/new');
    const res = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'dated',
      scopes: ['jobs.read'],
      expiry: 'date',
      expiresOn: '2020-01-01',
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(
      /<p class="error" id="key-expires-on-error">A key&#39;s date is after today and \d{4}-\d{2}-\d{2} at the latest \(366 days from today\)\.<\/p>/,
    );
    expect(res.text).toMatch(
      /id="key-expires-on"[^>]*value="2020-01-01" aria-describedby="key-expires-on-error" aria-invalid="true"/,
    );
  });
});
