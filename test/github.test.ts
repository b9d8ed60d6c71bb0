import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { FakeGithub, type FakeRepo, accountId as githubAccountId } from './fake-github.js';
import { GithubClient } from '../src/github/github.client.js';
import { syncGithubAccount } from '../src/github/github.sync.js';
import { linkGithub, verifyGithub } from '../src/github/github.proof.js';
import { longestStreak } from '../src/github/github.service.js';
import { GithubAccount, GithubRepo } from '../src/github/github.entity.js';

const { t } = useServer();
let gh: FakeGithub;
let client: GithubClient;
const fast = { statsAttempts: 3, statsDelayMs: 0 };
beforeAll(async () => {
  gh = await new FakeGithub().start();
  client = new GithubClient({ baseUrl: gh.url, token: 'ghp_test_token' });
});
afterAll(async () => {
  await gh?.stop();
});

async function linked(repos = defaultRepos()): Promise<{ user: TestUser; login: string; accountId: string }> {
  const user = await userWithKey(t);
  const login = uniqueName('gh');
  gh.accounts.set(login, { login, name: 'Octo Cat', repos });
  const account = await linkGithub(t.db.orm.em.fork(), user.user.id, login);
  await prove(user, login, account.challenge!);
  return { user, login, accountId: account.id };
}
/** What the login's owner does: put the code in the GitHub bio, then ask Shipyard to check. */
async function prove(user: TestUser, login: string, code: string) {
  gh.accounts.get(login)!.bio = `Builder. ${code}`;
  const result = await verifyGithub(t.db.orm.em.fork(), client, user.user.id);
  expect(result).toMatchObject({ verified: true });
}
const repoCount = (accountId: string) => t.db.orm.em.fork().count(GithubRepo, { account: accountId });
const sync = (accountId: string) => syncGithubAccount(t.db.orm.em.fork(), client, accountId, fast);

function defaultRepos(): FakeRepo[] {
  return [
    {
      name: 'engine',
      language: 'TypeScript',
      stars: 40,
      pushedAt: '2026-11-20T10:00:00Z',
      topics: ['compiler'],
      languages: { TypeScript: 6000, CSS: 1000 },
      weekly: [0, 3, 4, 0, 2],
    },
    {
      name: 'mill',
      language: 'Rust',
      stars: 10,
      pushedAt: '2026-11-18T10:00:00Z',
      languages: { Rust: 3000 },
      weekly: [1, 1, 0, 0, 5],
    },
    {
      name: 'old',
      language: 'Go',
      stars: 0,
      pushedAt: '2024-01-01T00:00:00Z',
      languages: { Go: 1000 },
      weekly: [0, 0, 0, 0, 0],
    },
    {
      name: 'forked-lib',
      language: 'C',
      stars: 2,
      fork: true,
      pushedAt: '2025-06-01T00:00:00Z',
      languages: { C: 99999 },
    },
    {
      name: 'notes',
      language: null,
      stars: 0,
      pushedAt: '2026-11-21T00:00:00Z',
      languages: {},
      weekly: [0, 0, 0, 1, 0],
    },
  ];
}

describe('GitHub insight', () => {
  it('answers 404 with a clear problem when no account is linked', async () => {
    const nobody = await userWithKey(t);
    for (const call of [
      api.getGithubProfile,
      api.listGithubRepos,
      api.getGithubLanguages,
      api.getGithubActivity,
      api.getGithubSummary,
    ]) {
      const res = await call({ client: nobody.client });
      expect(res.response?.status).toBe(404);
      expect(res.error).toMatchObject({ type: '/problems/github-not-linked' });
    }
  });

  it('syncs every page of repositories, languages and weekly activity, and serves them', async () => {
    const { user, login, accountId } = await linked();
    gh.accounts.get(login)!.statsPending = { engine: 2 }; // "statistics being computed" twice, then ready
    const account = await sync(accountId);
    expect(account.syncStatus).toBe('ok');
    const repoPages = gh.requests.filter((r) => r.path.startsWith(`/users/${login}/repos`));
    expect(repoPages.length).toBe(3); // 5 repos, 2 per page, followed by Link headers
    expect(gh.requests.every((r) => r.authorization === 'token ghp_test_token')).toBe(true);

    const profile = (await api.getGithubProfile({ client: user.client })).data!;
    expect(profile).toMatchObject({ login, name: 'Octo Cat', publicRepos: 5, syncStatus: 'ok', syncMessage: null });
    expect(profile.lastSyncedAt).not.toBeNull();

    const repos = (await api.listGithubRepos({ client: user.client, query: { limit: 3 } })).data!;
    expect(repos.items.map((r) => r.name)).toEqual(['notes', 'engine', 'mill']);
    expect(repos.items[1]).toMatchObject({
      fullName: `${login}/engine`,
      stars: 40,
      language: 'TypeScript',
      topics: ['compiler'],
      fork: false,
    });
    expect(repos.items[1]!.pushedAt).toBe('2026-11-20T10:00:00.000Z');
    const rest = (await api.listGithubRepos({ client: user.client, query: { limit: 3, cursor: repos.nextCursor! } }))
      .data!;
    expect(rest.items.map((r) => r.name)).toEqual(['forked-lib', 'old']);

    const languages = (await api.getGithubLanguages({ client: user.client })).data!.items;
    expect(languages).toEqual([
      { language: 'TypeScript', bytes: 6000, share: 0.5455 },
      { language: 'Rust', bytes: 3000, share: 0.2727 },
      { language: 'CSS', bytes: 1000, share: 0.0909 },
      { language: 'Go', bytes: 1000, share: 0.0909 },
    ]); // the fork's C is not the user's code

    const weeks = (await api.getGithubActivity({ client: user.client })).data!.weeks;
    expect(weeks.map((w) => w.commits)).toEqual([1, 4, 4, 1, 7]);

    const summary = (await api.getGithubSummary({ client: user.client })).data!;
    expect(summary).toMatchObject({
      login,
      repoCount: 5,
      totalStars: 52,
      topLanguages: ['TypeScript', 'Rust', 'CSS'],
      activeWeeks: 5,
      longestStreakWeeks: 5,
      syncStatus: 'ok',
    });
    // The sync's time, to the millisecond, on the profile and the summary alike.
    expect(profile.lastSyncedAt).toBe(account.syncedAt!.toISOString());
    expect(summary.lastSyncedAt).toBe(profile.lastSyncedAt);
  });

  it('keeps the last known activity when GitHub is still computing it (partial)', async () => {
    const { user, login, accountId } = await linked();
    await sync(accountId);
    gh.accounts.get(login)!.statsPending = { engine: 10 };
    gh.accounts.get(login)!.repos[0]!.stars = 41;
    const account = await sync(accountId);
    expect(account.syncStatus).toBe('partial');
    expect(account.syncMessage).toMatch(/still computing commit statistics for 1 repository/);
    expect((await api.getGithubActivity({ client: user.client })).data!.weeks.map((w) => w.commits)).toEqual([
      1, 4, 4, 1, 7,
    ]);
    expect((await api.getGithubSummary({ client: user.client })).data!.totalStars).toBe(53);
  });

  it('backs off on GitHub rate limits and keeps the last good data', async () => {
    const { user, accountId } = await linked();
    await sync(accountId);
    gh.rateLimited = true;
    try {
      const account = await sync(accountId);
      expect(account.syncStatus).toBe('rate_limited');
      expect(account.retryAfter!.getTime()).toBeGreaterThan(Date.now());
      expect(account.syncMessage).toMatch(/rate limit was reached; the last good data is kept/);
    } finally {
      gh.rateLimited = false;
    }
    expect((await api.getGithubSummary({ client: user.client })).data).toMatchObject({
      repoCount: 5,
      syncStatus: 'rate_limited',
    });
  });

  it('says clearly when the link is broken (404), keeping the data', async () => {
    const { user, login, accountId } = await linked();
    await sync(accountId);
    gh.accounts.delete(login);
    const account = await sync(accountId);
    expect(account.syncStatus).toBe('not_found');
    expect((await api.getGithubProfile({ client: user.client })).data!.syncMessage).toMatch(
      /GitHub has no user '.*': the link is broken/,
    );
    expect((await api.listGithubRepos({ client: user.client })).data!.items.length).toBe(5);
  });

  it('refuses a malformed GitHub answer instead of storing it', async () => {
    const { accountId, login } = await linked([
      { name: 'bad name with spaces', language: 'Go', stars: 1, pushedAt: '2026-01-01T00:00:00Z' },
    ]);
    const account = await sync(accountId);
    expect(account.syncStatus).toBe('error');
    expect(account.syncMessage).toMatch(/unexpected repository list/);
    expect(login).toBeTruthy();
  });

  it('refuses a login that is not a GitHub login', async () => {
    const user = await userWithKey(t);
    await expect(linkGithub(t.db.orm.em.fork(), user.user.id, '../etc/passwd')).rejects.toMatchObject({ status: 400 });
    await expect(linkGithub(t.db.orm.em.fork(), user.user.id, 'a'.repeat(40))).rejects.toMatchObject({ status: 400 });
  });

  it('shows the linked login on the profile', async () => {
    const { user, login } = await linked();
    expect((await raw(t, 'GET', '/users/me', { token: user.token })).json.githubLogin).toBe(login);
  });
});

describe("proof that a linked login is the user's", () => {
  it('keeps a login unproven until its GitHub bio holds the code: not shown, not fetched, not fed to the radar', async () => {
    const alice = await userWithKey(t);
    const login = uniqueName('torvalds');
    gh.accounts.set(login, { login, bio: 'I wrote a kernel.', repos: defaultRepos() });
    const account = await linkGithub(t.db.orm.em.fork(), alice.user.id, login);
    expect(account.verifiedAt).toBeNull();
    expect(account.challenge).toMatch(/^shipyard-verify-[0-9a-f]{16}$/);

    const profile = await raw(t, 'GET', '/users/me', { token: alice.token });
    expect(profile.json.githubLogin).toBeNull();
    const insight = await raw(t, 'GET', '/github/profile', { token: alice.token });
    expect(insight.status).toBe(404);
    expect(insight.json.type).toMatch(/github-not-verified$/);
    expect(insight.json.detail).toContain('Settings → GitHub');

    const before = gh.requests.length;
    const synced = await sync(account.id);
    expect(synced.syncStatus).toBe('never');
    expect(gh.requests.length).toBe(before); // nothing is fetched for a claim

    const refused = await verifyGithub(t.db.orm.em.fork(), client, alice.user.id);
    expect(refused).toMatchObject({ verified: false, reason: expect.stringContaining(account.challenge!) });
    expect((await raw(t, 'GET', '/github/profile', { token: alice.token })).status).toBe(404);
  });

  it('proves the login once the bio holds the code, shows it, and lets the code go', async () => {
    const { user, login, accountId } = await linked();
    expect((await raw(t, 'GET', '/users/me', { token: user.token })).json.githubLogin).toBe(login);
    gh.accounts.get(login)!.bio = 'Builder.'; // the code may leave the bio once proven
    await sync(accountId);
    const insight = await raw(t, 'GET', '/github/profile', { token: user.token });
    expect(insight.status).toBe(200);
    expect(insight.json.login).toBe(login);
  });

  it('takes the login from an earlier user when someone else proves control of it now', async () => {
    const first = await linked();
    const second = await userWithKey(t);
    const account = await linkGithub(t.db.orm.em.fork(), second.user.id, first.login.toUpperCase());
    await prove(second, first.login, account.challenge!);
    expect((await raw(t, 'GET', '/users/me', { token: second.token })).json.githubLogin).toBe(
      first.login.toUpperCase(),
    );
    expect((await raw(t, 'GET', '/users/me', { token: first.user.token })).json.githubLogin).toBeNull();
    expect((await raw(t, 'GET', '/github/profile', { token: first.user.token })).status).toBe(404);
  });

  it('linking another login starts over unproven; linking the same one keeps the proof', async () => {
    const { user, login } = await linked();
    const again = await linkGithub(t.db.orm.em.fork(), user.user.id, login);
    expect(again.verifiedAt).not.toBeNull();
    const other = uniqueName('gh');
    const moved = await linkGithub(t.db.orm.em.fork(), user.user.id, other);
    expect(moved.verifiedAt).toBeNull();
    expect((await raw(t, 'GET', '/users/me', { token: user.token })).json.githubLogin).toBeNull();
  });

  it('binds the proof to the GitHub account: a freed login taken by someone else loses it at the next sync', async () => {
    const { user, login, accountId } = await linked();
    await sync(accountId);
    expect(await repoCount(accountId)).toBe(5);
    // The owner renames their GitHub account; a stranger registers the freed login.
    gh.accounts.set(login, { login, id: 77_000_001, bio: 'Someone else entirely.', repos: defaultRepos().slice(0, 1) });
    const before = gh.requests.length;
    const synced = await sync(accountId);
    expect(gh.requests.slice(before).map((r) => r.path)).toEqual([`/users/${login}`]); // no repos fetched
    expect(synced.syncStatus).toBe('error');
    expect(synced.syncMessage).toContain('belongs to another GitHub account');
    expect(synced.verifiedAt).toBeNull();
    expect(synced.challenge).toMatch(/^shipyard-verify-/);
    expect(await repoCount(accountId)).toBe(0);
    expect((await raw(t, 'GET', '/users/me', { token: user.token })).json.githubLogin).toBeNull();
    expect((await raw(t, 'GET', '/github/profile', { token: user.token })).status).toBe(404);
  });

  it('takes the proof from an earlier user of the same GitHub account under its new login, and drops their data', async () => {
    const first = await linked();
    await sync(first.accountId);
    const renamed = uniqueName('gh');
    const id = githubAccountId({ login: first.login }); // GitHub keeps the id through a rename
    gh.accounts.delete(first.login);
    gh.accounts.set(renamed, { login: renamed, id, repos: defaultRepos() });
    const second = await userWithKey(t);
    const account = await linkGithub(t.db.orm.em.fork(), second.user.id, renamed);
    await prove(second, renamed, account.challenge!);
    expect((await raw(t, 'GET', '/users/me', { token: first.user.token })).json.githubLogin).toBeNull();
    expect(await repoCount(first.accountId)).toBe(0);
    const stale = await t.db.orm.em.fork().findOneOrFail(GithubAccount, { id: first.accountId });
    expect(stale).toMatchObject({ verifiedAt: null, githubId: null });
  });

  it('lets one user prove a login when two try at once, and the database holds one proof per login', async () => {
    const login = uniqueName('gh');
    gh.accounts.set(login, { login, repos: [] });
    const users = [await userWithKey(t), await userWithKey(t)];
    const codes = [];
    for (const u of users) codes.push((await linkGithub(t.db.orm.em.fork(), u.user.id, login)).challenge!);
    gh.accounts.get(login)!.bio = codes.join(' ');
    const results = await Promise.all(users.map((u) => verifyGithub(t.db.orm.em.fork(), client, u.user.id)));
    expect(results.map((r) => r.verified)).toEqual([true, true]);
    const proven = await t.db.orm.em.fork().find(GithubAccount, { login, verifiedAt: { $ne: null } });
    expect(proven).toHaveLength(1);
    // Whatever code path tries, the unique index refuses a second proof of the login.
    const other = await t.db.orm.em.fork().findOneOrFail(GithubAccount, { login, verifiedAt: null });
    await expect(
      t.db.orm.em.fork().nativeUpdate(GithubAccount, { id: other.id }, { verifiedAt: new Date(), githubId: 1 }),
    ).rejects.toThrow(/github_accounts_verified_login_key/);
  });

  it('says plainly when GitHub has no such user', async () => {
    const user = await userWithKey(t);
    await linkGithub(t.db.orm.em.fork(), user.user.id, uniqueName('nobody'));
    const result = await verifyGithub(t.db.orm.em.fork(), client, user.user.id);
    expect(result).toMatchObject({ verified: false, reason: expect.stringMatching(/GitHub has no user/) });
  });
});

describe('longest streak', () => {
  it('counts consecutive active weeks only', () => {
    const w = (week: string, commits: number) => ({ week, commits });
    expect(longestStreak([])).toBe(0);
    expect(longestStreak([w('2026-01-04', 1), w('2026-01-11', 2), w('2026-01-18', 0), w('2026-01-25', 1)])).toBe(2);
    expect(longestStreak([w('2026-01-04', 1), w('2026-01-25', 1)])).toBe(1); // a gap in the weeks breaks the run
  });
});

describe('scheduled sync', () => {
  it('syncs stale accounts and waits out a rate limit', async () => {
    const { syncStaleAccounts } = await import('../src/github/github.sync.js');
    const { GithubAccount } = await import('../src/github/github.entity.js');
    const { createLogger } = await import('../src/http/log.js');
    const due = await linked();
    const waiting = await linked();
    await t.db.orm.em
      .fork()
      .nativeUpdate(
        GithubAccount,
        { id: waiting.accountId },
        { retryAfter: new Date(Date.now() + 3_600_000), syncStatus: 'rate_limited' },
      );
    // On a long-lived PostgreSQL, earlier runs left accounts behind: only these two are due.
    await t.db.orm.em
      .fork()
      .nativeUpdate(GithubAccount, { id: { $nin: [due.accountId, waiting.accountId] } }, { attemptedAt: new Date() });
    await syncStaleAccounts(t.db.orm, client, 60, createLogger('silent'), fast);
    const em = t.db.orm.em.fork();
    expect((await em.findOneOrFail(GithubAccount, { id: due.accountId })).syncStatus).toBe('ok');
    expect((await em.findOneOrFail(GithubAccount, { id: waiting.accountId })).syncStatus).toBe('rate_limited');
    const before = gh.requests.length;
    await syncStaleAccounts(t.db.orm, client, 60, createLogger('silent'), fast);
    expect(gh.requests.filter((r, i) => i >= before && r.path.includes(due.login)).length).toBe(0); // fresh: not synced again
  });
});
