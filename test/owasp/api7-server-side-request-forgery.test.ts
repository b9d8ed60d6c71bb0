/**
 * OWASP API7:2023 Server Side Request Forgery. The only outbound requests the server makes go
 * to GITHUB_API_URL (operator configuration). URLs clients send (project links, apply URLs) are
 * stored, never fetched; GitHub logins are checked so they cannot steer a request elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, uniqueName, useServer } from '../harness.js';
import { FakeGithub } from '../fake-github.js';
import { GithubClient } from '../../src/github/github.client.js';
import { linkGithub } from '../../src/github/github.proof.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });
let gh: FakeGithub;
beforeAll(async () => {
  gh = await new FakeGithub().start();
});
afterAll(async () => {
  await gh?.stop();
});

describe('API7 server-side request forgery', () => {
  it('stores URLs from clients without fetching them', async () => {
    const before = gh.requests.length;
    const targets = ['http://169.254.169.254/latest/meta-data/', 'http://127.0.0.1:5432/', `${gh.url}/users/ssrf`];
    const res = await raw(t, 'POST', '/projects', {
      token: ada.token,
      body: { name: uniqueName('P'), links: targets.map((url, i) => ({ label: `l${i}`, url })) },
    });
    expect(res.status).toBe(201);
    const job = await raw(t, 'POST', '/jobs', {
      token: ada.token,
      body: {
        title: 'j',
        company: 'c',
        description: 'd',
        remotePolicy: 'remote',
        employmentType: 'contract',
        applyUrl: `https://${new URL(gh.url).host}/x`,
      },
    });
    expect(job.status).toBe(201);
    expect(gh.requests.length).toBe(before); // nothing went out
  });

  it('refuses GitHub logins that would reach another path or host', async () => {
    for (const login of ['../repos/x', 'a/b', 'evil.com', 'user@host', '%2e%2e', 'a b', '']) {
      await expect(linkGithub(t.db.orm.em.fork(), ada.user.id, login)).rejects.toMatchObject({ status: 400 });
    }
  });

  it('sends GitHub requests only to the configured API, with path segments encoded', async () => {
    const client = new GithubClient({ baseUrl: gh.url });
    gh.accounts.set('octo', { login: 'octo', repos: [] });
    await client.user('octo');
    await client.languages('octo', '..%2F..%2Fadmin').catch(() => undefined);
    const last = gh.requests.at(-1)!;
    expect(last.path).toBe('/repos/octo/..%252F..%252Fadmin/languages');
  });
});
