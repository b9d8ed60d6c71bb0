/**
 * Linking and syncing. A sync fetches everything first and then replaces the stored data in
 * one transaction, so a sync cut short (rate limit, broken link, bad response) keeps the last
 * good data and records, in plain words, what happened.
 */
import { QueryOrder, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { GithubAccount, GithubRepo, type WeeklyCommits } from './github.entity.js';
import type { Logger } from '../kernel/logger.js';
import { inSpan } from '../telemetry/telemetry.js';
import { loseProof } from './github.proof.js';
import {
  type GithubClient,
  GithubInvalidResponse,
  GithubNotFound,
  GithubRateLimited,
  type GithubRepoData,
  type GithubUser,
} from './github.client.js';

type SyncOptions = {
  /** How many times to ask again while GitHub is computing statistics (202). */
  statsAttempts: number;
  /** Wait before asking again (multiplied by the attempt number). */
  statsDelayMs: number;
};
const DEFAULT_SYNC_OPTIONS: SyncOptions = { statsAttempts: 4, statsDelayMs: 1500 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function statsWithRetry(
  client: GithubClient,
  repo: GithubRepoData,
  opts: SyncOptions,
): Promise<WeeklyCommits | undefined> {
  for (let attempt = 1; attempt <= opts.statsAttempts; attempt++) {
    const weeks = await client.commitActivity(repo.owner.login, repo.name);
    if (weeks !== undefined) return weeks;
    if (attempt < opts.statsAttempts) await sleep(opts.statsDelayMs * attempt);
  }
  return undefined;
}

type Fetched = { repo: GithubRepoData; languages: Record<string, number>; weekly: WeeklyCommits | undefined };

/**
 * One account's sync: fetch the user and their repositories from GitHub, then replace the stored
 * repositories in one transaction. A failure keeps the last good data and says why on the account.
 * An unproven login (src/github/github.proof.ts) is left alone.
 */
export async function syncGithubAccount(
  em: EntityManager,
  client: GithubClient,
  accountId: string,
  opts = DEFAULT_SYNC_OPTIONS,
): Promise<GithubAccount> {
  const account = await em.findOneOrFail(GithubAccount, { id: accountId });
  if (!account.verifiedAt) return account; // an unproven claim: nothing is fetched for it
  account.attemptedAt = new Date();
  try {
    const user = await client.user(account.login);
    if (user.id !== account.githubId) {
      // Renamed away, or freed and taken: this login is now someone else's GitHub account.
      await em.fork().transactional(async (tem) => {
        const lost = await tem.findOneOrFail(GithubAccount, { id: account.id }, { populate: ['user'] });
        await loseProof(tem, lost);
        Object.assign(lost, {
          attemptedAt: account.attemptedAt,
          syncStatus: 'error',
          syncMessage: `The GitHub login ${account.login} now belongs to another GitHub account than the one that proved it, so its data is no longer shown. Link your current login and prove it again under Settings → GitHub.`,
        });
      });
      em.clear();
      return await em.findOneOrFail(GithubAccount, { id: account.id });
    }
    const fetched = await fetchRepos(client, account.login, opts);
    await store(em, account, user, fetched);
    em.clear();
    return await em.findOneOrFail(GithubAccount, { id: account.id });
  } catch (err) {
    Object.assign(account, failure(err, account.login));
    await em.flush();
    return account;
  }
}

/** Every repository with its languages and weekly commits; forks are listed without either. */
async function fetchRepos(client: GithubClient, login: string, opts: SyncOptions): Promise<Fetched[]> {
  const fetched: Fetched[] = [];
  for (const repo of await client.repos(login)) {
    try {
      // Forks are other people's code: their languages and activity do not describe the user.
      const languages = repo.fork ? {} : await client.languages(repo.owner.login, repo.name);
      const weekly = repo.fork ? [] : await statsWithRetry(client, repo, opts);
      fetched.push({ repo, languages, weekly });
    } catch (err) {
      if (err instanceof GithubNotFound) continue; // deleted since it was listed
      throw err;
    }
  }
  return fetched;
}

/**
 * Replaces the account's repositories and records the sync. A repository whose commit statistics
 * GitHub was still computing keeps its last known figures, and the sync is 'partial'.
 */
async function store(em: EntityManager, account: GithubAccount, user: GithubUser, fetched: Fetched[]) {
  const previous = new Map(
    (await em.find(GithubRepo, { account: account.id })).map(
      (r) => [r.fullName, r.weeklyCommits ?? undefined] as const,
    ),
  );
  const pending = fetched.filter((f) => f.weekly === undefined).map((f) => f.repo.full_name);
  await em.transactional(async (tem) => {
    await tem.nativeDelete(GithubRepo, { account: account.id });
    for (const { repo, languages, weekly } of fetched) {
      tem.create(GithubRepo, {
        account: tem.getReference(GithubAccount, account.id),
        name: repo.name,
        fullName: repo.full_name,
        description: repo.description ?? null,
        htmlUrl: repo.html_url,
        stars: repo.stargazers_count,
        forks: repo.forks_count,
        language: repo.language ?? null,
        topics: repo.topics ?? [],
        pushedAt: repo.pushed_at ? new Date(repo.pushed_at) : null,
        fork: repo.fork,
        archived: repo.archived ?? false,
        languages,
        weeklyCommits: weekly ?? previous.get(repo.full_name) ?? null,
      });
    }
    const a = await tem.findOneOrFail(GithubAccount, { id: account.id });
    Object.assign(a, {
      name: user.name ?? null,
      avatarUrl: user.avatar_url ?? null,
      htmlUrl: user.html_url ?? null,
      publicRepos: user.public_repos ?? null,
      followers: user.followers ?? null,
      syncedAt: new Date(),
      attemptedAt: account.attemptedAt,
      retryAfter: null,
      syncStatus: pending.length ? 'partial' : 'ok',
      syncMessage: pending.length
        ? `GitHub was still computing commit statistics for ${pending.length} repositor${pending.length === 1 ? 'y' : 'ies'} (${pending.slice(0, 3).join(', ')}${pending.length > 3 ? ', …' : ''}); their last known figures are kept.`
        : null,
    });
  });
}

/** What a failed sync records on the account: its status, why, and when to try again after a rate limit. */
function failure(
  err: unknown,
  login: string,
): Pick<GithubAccount, 'syncStatus' | 'syncMessage'> & { retryAfter?: Date } {
  if (err instanceof GithubNotFound)
    return {
      syncStatus: 'not_found',
      syncMessage: `GitHub has no user '${login}': the link is broken. Link the right login; the last synced data is kept until then.`,
    };
  if (err instanceof GithubRateLimited)
    return {
      syncStatus: 'rate_limited',
      retryAfter: err.resetAt,
      syncMessage: `GitHub's rate limit was reached; the last good data is kept and the next sync waits until ${err.resetAt.toISOString()}.`,
    };
  if (err instanceof GithubInvalidResponse)
    return { syncStatus: 'error', syncMessage: `${err.message}; the last good data is kept.` };
  return { syncStatus: 'error', syncMessage: 'GitHub could not be reached; the last good data is kept.' };
}

/** Sync every proven account whose data is older than `staleMinutes` (and not waiting on a rate limit). */
export async function syncStaleAccounts(
  orm: MikroORM,
  client: GithubClient,
  staleMinutes: number,
  log: Logger,
  opts = DEFAULT_SYNC_OPTIONS,
): Promise<number> {
  const em = orm.em.fork();
  const now = new Date();
  const cutoff = new Date(now.getTime() - staleMinutes * 60_000);
  const due = await em.find(
    GithubAccount,
    {
      verifiedAt: { $ne: null },
      $and: [
        { $or: [{ attemptedAt: null }, { attemptedAt: { $lt: cutoff } }] },
        { $or: [{ retryAfter: null }, { retryAfter: { $lt: now } }] },
      ],
    },
    { fields: ['id'], limit: 100, orderBy: [{ attemptedAt: QueryOrder.ASC_NULLS_FIRST }, { id: QueryOrder.ASC }] },
  ); // stalest first: none starves
  for (const { id } of due) {
    const account = await syncGithubAccount(orm.em.fork(), client, id, opts);
    log.info('github sync', { login: account.login, status: account.syncStatus });
  }
  return due.length;
}

/** Runs syncStaleAccounts every `intervalMinutes`; returns a stop function. */
export function scheduleGithubSync(
  orm: MikroORM,
  client: GithubClient,
  intervalMinutes: number,
  log: Logger,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    inSpan('github sync', {}, () => syncStaleAccounts(orm, client, intervalMinutes, log))
      .catch((err) => log.error('github sync failed', { error: err }))
      .finally(() => {
        running = false;
      });
  }, Math.min(intervalMinutes, 15) * 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
