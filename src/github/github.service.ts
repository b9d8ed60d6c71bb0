/**
 * GitHub Insight, read side: what was synced for the caller's linked account. Not linked, or
 * linked but not proven, is a clear 404, never an empty 200.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  GithubActivity,
  GithubLanguages,
  GithubProfile,
  GithubRepoPage,
  GithubSummary,
} from '../../codegen/generated/api/types.gen.js';
import type { GithubRepo } from './github.entity.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { ProblemError } from '../kernel/problem.js';
import { cursorList, decodeCursor, encodeCursor, isOffsetUpTo } from '../kernel/cursor.js';
import { accountOf, repoFigures, repoPage, weeklyCommits } from './github.queries.js';

const notLinked = () =>
  new ProblemError(
    404,
    'github-not-linked',
    'No GitHub account linked',
    'No GitHub account is linked to your profile. Link one in Settings → GitHub (operators: `shipyard github link`).',
  );

const notVerified = (login: string) =>
  new ProblemError(
    404,
    'github-not-verified',
    'GitHub login not verified',
    `The GitHub login ${login} is linked to your profile but not proven yours yet, so nothing is read from it. Prove it in Settings → GitHub.`,
  );

/** The linked account as the API shows it (its sync time as text). */
type LinkedAccount = Awaited<ReturnType<typeof accountOf>>[number];

async function linkedAccount(em: EntityManager, actor: Actor): Promise<LinkedAccount> {
  const me = actorId(actor);
  const [account] = me === null ? [] : await accountOf(em, { userId: me });
  if (!account) throw notLinked();
  if (account.verifiedAt === null) throw notVerified(account.login);
  return account;
}

/** GET /github/profile: the caller's linked, verified GitHub account. */
export async function githubProfile(em: EntityManager, actor: Actor): Promise<GithubProfile> {
  return presentGithubProfile(await linkedAccount(em, actor));
}

function presentGithubProfile(a: LinkedAccount): GithubProfile {
  return {
    login: a.login,
    name: a.name,
    avatarUrl: a.avatarUrl,
    htmlUrl: a.htmlUrl,
    publicRepos: a.publicRepos,
    followers: a.followers,
    syncStatus: a.syncStatus,
    syncMessage: a.syncMessage,
    lastSyncedAt: a.syncedAt,
  };
}

/** Past this, a cursor was not one this list gave (a list this long is not paged through). */
const isOffset = isOffsetUpTo(100_000);

export async function githubRepos(
  em: EntityManager,
  actor: Actor,
  query: { limit: number; cursor?: string },
): Promise<GithubRepoPage> {
  const account = await linkedAccount(em, actor);
  const list = cursorList('github-repos', account.id);
  const offset = decodeCursor(query.cursor, isOffset, list)?.o ?? 0;
  const rows = await repoPage(em, { accountId: account.id, limit: query.limit + 1, offset });
  const more = rows.length > query.limit;
  return {
    items: rows.slice(0, query.limit),
    nextCursor: more ? encodeCursor({ o: offset + query.limit }, list) : null,
  };
}

export function languageShares(repos: Pick<GithubRepo, 'fork' | 'languages'>[]): GithubLanguages['items'] {
  const bytes = new Map<string, number>();
  for (const r of repos)
    if (!r.fork) for (const [lang, n] of Object.entries(r.languages ?? {})) bytes.set(lang, (bytes.get(lang) ?? 0) + n);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  return [...bytes.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([language, n]) => ({ language, bytes: n, share: total ? Math.round((n / total) * 10_000) / 10_000 : 0 }));
}

/** Commits per week summed over the account's repositories: the last 52 weeks, oldest first. */
async function weeklyTotals(em: EntityManager, accountId: string): Promise<GithubActivity['weeks']> {
  return (await weeklyCommits(em, { accountId })).reverse();
}

export function longestStreak(weeks: GithubActivity['weeks']): number {
  let best = 0;
  let run = 0;
  let last: number | undefined;
  for (const w of weeks) {
    const t = Date.parse(w.week);
    const consecutive = last !== undefined && t - last === 7 * 86_400_000;
    if (w.commits > 0) run = consecutive && run > 0 ? run + 1 : 1;
    else run = 0;
    best = Math.max(best, run);
    last = t;
  }
  return best;
}

export async function githubLanguages(em: EntityManager, actor: Actor): Promise<GithubLanguages> {
  return { items: languageShares(await repoFigures(em, { accountId: (await linkedAccount(em, actor)).id })) };
}

export async function githubActivity(em: EntityManager, actor: Actor): Promise<GithubActivity> {
  return { weeks: await weeklyTotals(em, (await linkedAccount(em, actor)).id) };
}

export async function githubSummary(em: EntityManager, actor: Actor): Promise<GithubSummary> {
  const account = await linkedAccount(em, actor);
  const repos = await repoFigures(em, { accountId: account.id });
  const weeks = await weeklyTotals(em, account.id);
  return {
    login: account.login,
    repoCount: repos.length,
    totalStars: repos.reduce((sum, r) => sum + r.stars, 0),
    topLanguages: languageShares(repos)
      .slice(0, 3)
      .map((l) => l.language),
    activeWeeks: weeks.filter((w) => w.commits > 0).length,
    longestStreakWeeks: longestStreak(weeks),
    lastSyncedAt: account.syncedAt,
    syncStatus: account.syncStatus,
  };
}
