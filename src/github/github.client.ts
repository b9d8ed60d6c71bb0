/**
 * What we read from GitHub's REST API, through @octokit/rest against a configurable base URL
 * (tests point it at a local fake speaking GitHub's wire format). Every response is validated
 * with zod before use: a malformed answer is an error, never data.
 */
import { Octokit } from '@octokit/rest';
import * as z from 'zod';

export const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

const zUser = z.object({
  /** GitHub's account id: it stays through a rename and is never given to another account. */
  id: z.number().int().positive(),
  login: z.string(),
  name: z.string().nullable().optional(),
  avatar_url: z.string().nullable().optional(),
  html_url: z.string().nullable().optional(),
  bio: z.string().nullable().optional(),
  public_repos: z.number().int().nonnegative().optional(),
  followers: z.number().int().nonnegative().optional(),
});
const zRepo = z.object({
  name: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/),
  full_name: z.string().max(200),
  description: z.string().nullable().optional(),
  html_url: z.string().max(500),
  stargazers_count: z.number().int().nonnegative(),
  forks_count: z.number().int().nonnegative(),
  language: z.string().max(100).nullable().optional(),
  topics: z.array(z.string()).optional(),
  pushed_at: z.string().nullable().optional(),
  fork: z.boolean(),
  archived: z.boolean().optional(),
  owner: z.object({ login: z.string() }),
});
const zLanguages = z.record(z.string().max(100), z.number().int().nonnegative());
const zCommitActivity = z.array(z.object({ week: z.number().int(), total: z.number().int().nonnegative() }));

export type GithubUser = z.infer<typeof zUser>;
export type GithubRepoData = z.infer<typeof zRepo>;

/** GitHub said no for now: rate limit (primary or secondary). */
export class GithubRateLimited extends Error {
  constructor(readonly resetAt: Date) {
    super(`GitHub's rate limit is used up until ${resetAt.toISOString()}`);
  }
}
export class GithubNotFound extends Error {}
export class GithubInvalidResponse extends Error {}

type HttpErrorLike = { status?: number; response?: { headers?: Record<string, string | number | undefined> } };

function translate(err: unknown): never {
  const e = err as HttpErrorLike;
  const headers = e.response?.headers ?? {};
  if (e.status === 404) throw new GithubNotFound('GitHub answered 404');
  if (
    e.status === 429 ||
    (e.status === 403 && (String(headers['x-ratelimit-remaining']) === '0' || headers['retry-after'] !== undefined))
  ) {
    const reset = Number(headers['x-ratelimit-reset']);
    const retry = Number(headers['retry-after']);
    const at =
      Number.isFinite(reset) && reset > 0
        ? new Date(reset * 1000)
        : new Date(Date.now() + (Number.isFinite(retry) ? retry : 60) * 1000);
    throw new GithubRateLimited(at);
  }
  throw err;
}

function parse<T>(schema: z.ZodType<T>, data: unknown, what: string): T {
  const result = schema.safeParse(data);
  if (!result.success) throw new GithubInvalidResponse(`GitHub sent an unexpected ${what}`);
  return result.data;
}

export type GithubClientOptions = { baseUrl: string; token?: string; maxRepos?: number };

export class GithubClient {
  private readonly octokit: Octokit;
  private readonly maxRepos: number;

  constructor(opts: GithubClientOptions) {
    this.octokit = new Octokit({
      baseUrl: opts.baseUrl.replace(/\/$/, ''),
      ...(opts.token ? { auth: opts.token } : {}),
      userAgent: 'shipyard-github-insight',
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    this.maxRepos = opts.maxRepos ?? 300;
  }

  async user(login: string): Promise<GithubUser> {
    try {
      const res = await this.octokit.rest.users.getByUsername({ username: login });
      return parse(zUser, res.data, 'user');
    } catch (err) {
      return translate(err);
    }
  }

  /** Public repositories the user owns, every page (Link headers), up to maxRepos. */
  async repos(login: string): Promise<GithubRepoData[]> {
    const out: GithubRepoData[] = [];
    try {
      for await (const page of this.octokit.paginate.iterator(this.octokit.rest.repos.listForUser, {
        username: login,
        type: 'owner',
        per_page: 100,
        sort: 'pushed',
      })) {
        out.push(...parse(z.array(zRepo), page.data, 'repository list'));
        if (out.length >= this.maxRepos) break;
      }
    } catch (err) {
      if (err instanceof GithubInvalidResponse) throw err;
      return translate(err);
    }
    return out.slice(0, this.maxRepos);
  }

  async languages(owner: string, repo: string): Promise<Record<string, number>> {
    try {
      const res = await this.octokit.rest.repos.listLanguages({ owner, repo });
      return parse(zLanguages, res.data, 'language list');
    } catch (err) {
      return translate(err);
    }
  }

  /** Weekly commit totals, or undefined while GitHub is still computing them (202). */
  async commitActivity(owner: string, repo: string): Promise<{ week: string; commits: number }[] | undefined> {
    try {
      const res = await this.octokit.rest.repos.getCommitActivityStats({ owner, repo });
      if ((res.status as number) === 202) return undefined;
      if ((res.status as number) === 204) return [];
      return parse(zCommitActivity, res.data, 'commit activity').map((w) => ({
        week: new Date(w.week * 1000).toISOString().slice(0, 10),
        commits: w.total,
      }));
    } catch (err) {
      return translate(err);
    }
  }
}
