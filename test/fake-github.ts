/**
 * A local stand-in for GitHub's REST API on loopback, answering with bodies shaped like
 * GitHub's documented responses (users, repos with Link-header pagination, languages, commit
 * activity with 202 "being computed", 403 rate limit, 404). No test reaches the real GitHub.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeRepo = {
  name: string;
  language: string | null;
  stars: number;
  forks?: number;
  fork?: boolean;
  pushedAt: string;
  topics?: string[];
  languages?: Record<string, number>;
  weekly?: number[];
};
export type FakeAccount = {
  login: string;
  /**
   * GitHub's account id, which stays when the login is renamed and differs when a freed login is
   * taken by someone else. Defaults to a number derived from the login.
   */
  id?: number;
  name?: string;
  /** The profile bio: where a user puts the code that proves the login is theirs. */
  bio?: string;
  repos: FakeRepo[];
  /** How many times commit_activity answers 202 before the data (per repo name). */
  statsPending?: Record<string, number>;
};

/** The account's id: its own, or one derived from the lower-cased login (as stable as GitHub's). */
export function accountId(a: Pick<FakeAccount, 'login' | 'id'>): number {
  if (a.id !== undefined) return a.id;
  let h = 0;
  for (const ch of a.login.toLowerCase()) h = (h * 31 + ch.charCodeAt(0)) % 90_000_000;
  return 10_000_000 + h;
}

export class FakeGithub {
  readonly requests: { method: string; path: string; authorization?: string; userAgent?: string }[] = [];
  readonly accounts = new Map<string, FakeAccount>();
  /** While set, every request gets GitHub's 403 rate-limit answer. */
  rateLimited = false;
  /** Largest page it serves, whatever per_page asks (GitHub pages by Link headers either way). */
  pageSize = 2;
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-github-api-version-selected': '2022-11-28',
      ...headers,
    });
    res.end(body === undefined ? '' : JSON.stringify(body));
  }

  private notFound(res: ServerResponse) {
    this.send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      authorization: req.headers.authorization,
      userAgent: req.headers['user-agent'],
    });
    if (this.rateLimited) {
      const reset = Math.floor(Date.now() / 1000) + 1800;
      return this.send(
        res,
        403,
        {
          message:
            "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit.)",
          documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
        },
        {
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': '60',
          'x-ratelimit-reset': String(reset),
          'x-ratelimit-resource': 'core',
        },
      );
    }
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] === 'users' && parts.length === 2) {
      const a = this.accounts.get(parts[1]!.toLowerCase());
      return a ? this.send(res, 200, this.user(a)) : this.notFound(res);
    }
    if (parts[0] === 'users' && parts[2] === 'repos') {
      const a = this.accounts.get(parts[1]!.toLowerCase());
      if (!a) return this.notFound(res);
      const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), this.pageSize);
      const page = Number(url.searchParams.get('page') ?? 1);
      const last = Math.max(1, Math.ceil(a.repos.length / perPage));
      const link = (p: number, rel: string) => {
        const u = new URL(url.toString());
        u.searchParams.set('page', String(p));
        return `<${u.toString()}>; rel="${rel}"`;
      };
      const links = [
        ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
        ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : []),
      ];
      const items = a.repos
        .slice((page - 1) * perPage, page * perPage)
        .map((r, i) => this.repo(a, r, (page - 1) * perPage + i));
      return this.send(res, 200, items, links.length ? { link: links.join(', ') } : {});
    }
    if (parts[0] === 'repos' && parts.length >= 4) {
      const a = this.accounts.get(parts[1]!.toLowerCase());
      const repo = a?.repos.find((r) => r.name === parts[2]);
      if (!a || !repo) return this.notFound(res);
      if (parts[3] === 'languages') return this.send(res, 200, repo.languages ?? {});
      if (parts[3] === 'stats' && parts[4] === 'commit_activity') {
        const pending = a.statsPending?.[repo.name] ?? 0;
        if (pending > 0) {
          a.statsPending![repo.name] = pending - 1;
          return this.send(res, 202, {});
        }
        const now = new Date();
        const sunday =
          Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) / 1000 - now.getUTCDay() * 86400;
        const weekly = repo.weekly ?? [];
        return this.send(
          res,
          200,
          weekly.map((total, i) => ({
            days: [0, 0, 0, total, 0, 0, 0],
            total,
            week: sunday - (weekly.length - 1 - i) * 7 * 86400,
          })),
        );
      }
    }
    return this.notFound(res);
  }

  private user(a: FakeAccount) {
    const id = accountId(a);
    return {
      login: a.login,
      id,
      node_id: Buffer.from(`04:User${id}`).toString('base64'),
      avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
      gravatar_id: '',
      url: `https://api.github.com/users/${a.login}`,
      html_url: `https://github.com/${a.login}`,
      type: 'User',
      site_admin: false,
      name: a.name ?? null,
      company: null,
      blog: '',
      location: null,
      email: null,
      hireable: null,
      bio: a.bio ?? null,
      twitter_username: null,
      public_repos: a.repos.length,
      public_gists: 0,
      followers: 20,
      following: 0,
      created_at: '2011-01-25T18:44:36Z',
      updated_at: '2026-11-01T09:00:00Z',
    };
  }

  private repo(a: FakeAccount, r: FakeRepo, i: number) {
    return {
      id: 1296269 + i,
      node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
      name: r.name,
      full_name: `${a.login}/${r.name}`,
      private: false,
      owner: { login: a.login, id: accountId(a), type: 'User', site_admin: false },
      html_url: `https://github.com/${a.login}/${r.name}`,
      description: `The ${r.name} project`,
      fork: r.fork ?? false,
      url: `https://api.github.com/repos/${a.login}/${r.name}`,
      created_at: '2020-01-01T00:00:00Z',
      updated_at: r.pushedAt,
      pushed_at: r.pushedAt,
      homepage: null,
      size: 108,
      stargazers_count: r.stars,
      watchers_count: r.stars,
      language: r.language,
      has_issues: true,
      forks_count: r.forks ?? 0,
      archived: false,
      disabled: false,
      open_issues_count: 0,
      license: null,
      topics: r.topics ?? [],
      visibility: 'public',
      forks: r.forks ?? 0,
      open_issues: 0,
      watchers: r.stars,
      default_branch: 'main',
    };
  }
}
