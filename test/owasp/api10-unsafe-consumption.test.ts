/** OWASP API10:2023 Unsafe Consumption of APIs — what GitHub sends is checked before it is used. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userWithKey, linkProvenGithub, useServer } from '../harness.js';
import { GithubClient } from '../../src/github/github.client.js';
import { syncGithubAccount } from '../../src/github/github.sync.js';
import { GithubRepo } from '../../src/github/github.entity.js';

const { t } = useServer();
let hostile: Server;
let url = '';
let reply: (path: string) => { status: number; body: unknown } = () => ({ status: 404, body: {} });
beforeAll(async () => {
  hostile = createServer((req, res) => {
    const r = reply(req.url ?? '');
    res.writeHead(r.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(r.body));
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
});
afterAll(async () => {
  hostile.closeAllConnections();
  await new Promise((r) => hostile.close(r));
});

async function syncAgainst(replyFn: typeof reply) {
  reply = replyFn;
  const u = await userWithKey(t);
  const account = await linkProvenGithub(t, u.user.id, 'target');
  const synced = await syncGithubAccount(t.db.orm.em.fork(), new GithubClient({ baseUrl: url }), account.id, {
    statsAttempts: 1,
    statsDelayMs: 0,
  });
  return { synced, repos: await t.db.orm.em.fork().count(GithubRepo, { account: account.id }) };
}

const user = { login: 'target', public_repos: 1, followers: 1 };
const repo = {
  name: 'r',
  full_name: 'target/r',
  html_url: 'https://github.com/target/r',
  stargazers_count: 1,
  forks_count: 0,
  fork: false,
  owner: { login: 'target' },
};

describe('API10 unsafe consumption of APIs', () => {
  it('refuses responses of the wrong shape, storing nothing', async () => {
    const cases: ((p: string) => { status: number; body: unknown })[] = [
      (p) =>
        p.startsWith('/users/target/repos') ? { status: 200, body: { not: 'a list' } } : { status: 200, body: user },
      (p) =>
        p.startsWith('/users/target/repos')
          ? { status: 200, body: [{ ...repo, stargazers_count: -5 }] }
          : { status: 200, body: user },
      (p) =>
        p.startsWith('/users/target/repos')
          ? { status: 200, body: [{ ...repo, name: '../../etc' }] }
          : { status: 200, body: user },
      (p) =>
        p.startsWith('/users/target/repos')
          ? { status: 200, body: [repo] }
          : p.includes('/languages')
            ? { status: 200, body: { Go: 'lots' } }
            : { status: 200, body: user },
      () => ({ status: 200, body: { login: 42 } }),
    ];
    for (const c of cases) {
      const { synced, repos } = await syncAgainst(c);
      expect(synced.syncStatus).toBe('error');
      expect(synced.syncMessage).toMatch(/GitHub sent an unexpected/);
      expect(repos).toBe(0);
    }
  });

  it('treats a 5xx from GitHub as an outage, keeping what it had', async () => {
    const { synced } = await syncAgainst(() => ({ status: 502, body: { message: 'Server Error' } }));
    expect(synced.syncStatus).toBe('error');
    expect(synced.syncMessage).toBe('GitHub could not be reached; the last good data is kept.');
  });
});
