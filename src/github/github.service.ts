/**
 * GitHub Insight, read side: what was synced for the caller's linked account. Not linked is a
 * clear 404, never an empty 200.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { GithubActivity, GithubLanguages, GithubProfile, GithubRepoPage, GithubSummary } from '../../codegen/generated/api/types.gen.js';
import { GithubAccount, GithubRepo } from './github.entity.js';
import type { Actor } from '../http/actor.js';
import { ProblemError } from '../http/problem.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';

const notLinked = () =>
  new ProblemError(404, 'github-not-linked', 'No GitHub account linked',
    'No GitHub account is linked to your profile. Link one in Settings → GitHub (operators: `shipyard github link`).');

export async function linkedAccount(em: EntityManager, actor: Actor): Promise<GithubAccount> {
  const account = await em.findOne(GithubAccount, { user: actor.userId });
  if (!account) throw notLinked();
  return account;
}

export function presentGithubProfile(a: GithubAccount): GithubProfile {
  return {
    login: a.login,
    name: a.name ?? null,
    avatarUrl: a.avatarUrl ?? null,
    htmlUrl: a.htmlUrl ?? null,
    publicRepos: a.publicRepos ?? null,
    followers: a.followers ?? null,
    syncStatus: a.syncStatus,
    syncMessage: a.syncMessage ?? null,
    lastSyncedAt: a.syncedAt?.toISOString() ?? null,
  };
}

const isOffset = (v: unknown): v is { o: number } => typeof v === 'object' && v !== null && Number.isInteger((v as { o?: unknown }).o) && (v as { o: number }).o > 0;

export async function githubRepos(em: EntityManager, actor: Actor, query: { limit: number; cursor?: string }): Promise<GithubRepoPage> {
  const account = await linkedAccount(em, actor);
  const offset = decodeCursor(query.cursor, isOffset)?.o ?? 0;
  const rows = await em.find(GithubRepo, { account: account.id }, {
    orderBy: [{ pushedAt: 'desc nulls last' }, { fullName: 'asc' }], limit: query.limit + 1, offset,
  });
  const more = rows.length > query.limit;
  return {
    items: rows.slice(0, query.limit).map((r) => ({
      name: r.name, fullName: r.fullName, description: r.description ?? null, htmlUrl: r.htmlUrl, stars: r.stars, forks: r.forks,
      language: r.language ?? null, topics: r.topics, pushedAt: r.pushedAt?.toISOString() ?? null, fork: r.fork, archived: r.archived,
    })),
    nextCursor: more ? encodeCursor({ o: offset + query.limit }) : null,
  };
}

async function ownRepos(em: EntityManager, account: GithubAccount) {
  return em.find(GithubRepo, { account: account.id }, { fields: ['fork', 'stars', 'languages', 'weeklyCommits'] });
}

export function languageShares(repos: Pick<GithubRepo, 'fork' | 'languages'>[]): GithubLanguages['items'] {
  const bytes = new Map<string, number>();
  for (const r of repos) if (!r.fork) for (const [lang, n] of Object.entries(r.languages ?? {})) bytes.set(lang, (bytes.get(lang) ?? 0) + n);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  return [...bytes.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([language, n]) => ({ language, bytes: n, share: total ? Math.round((n / total) * 10_000) / 10_000 : 0 }));
}

/** Commits per week summed over repositories: the last 52 weeks, oldest first. */
export function weeklyTotals(repos: Pick<GithubRepo, 'weeklyCommits'>[]): GithubActivity['weeks'] {
  const weeks = new Map<string, number>();
  for (const r of repos) for (const w of r.weeklyCommits ?? []) weeks.set(w.week, (weeks.get(w.week) ?? 0) + w.commits);
  return [...weeks.entries()].sort((a, b) => a[0].localeCompare(b[0])).slice(-52).map(([week, commits]) => ({ week, commits }));
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
  return { items: languageShares(await ownRepos(em, await linkedAccount(em, actor))) };
}

export async function githubActivity(em: EntityManager, actor: Actor): Promise<GithubActivity> {
  return { weeks: weeklyTotals(await ownRepos(em, await linkedAccount(em, actor))) };
}

export async function githubSummary(em: EntityManager, actor: Actor): Promise<GithubSummary> {
  const account = await linkedAccount(em, actor);
  const repos = await ownRepos(em, account);
  const weeks = weeklyTotals(repos);
  return {
    login: account.login,
    repoCount: repos.length,
    totalStars: repos.reduce((sum, r) => sum + r.stars, 0),
    topLanguages: languageShares(repos).slice(0, 3).map((l) => l.language),
    activeWeeks: weeks.filter((w) => w.commits > 0).length,
    longestStreakWeeks: longestStreak(weeks),
    lastSyncedAt: account.syncedAt?.toISOString() ?? null,
    syncStatus: account.syncStatus,
  };
}
