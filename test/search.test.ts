import { beforeAll, describe, expect, it } from 'vitest';
import { userWithKey, raw, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';
import { User } from '../src/users/user.entity.js';
import { markSnippet } from '../src/search/search.service.js';

const { t } = useServer();
let ada: TestUser;
let eve: TestUser;
/** A word nobody else uses, so the shared database of a CI run cannot disturb the ranking. */
let w: string;
beforeAll(async () => {
  [ada, eve] = [await userWithKey(t), await userWithKey(t)];
  w = `zq${uniqueName('').replace(/-/g, '')}`;
});

const post = async (who: TestUser, title: string, body: string, extra: object = {}) =>
  (await api.createPost({ client: who.client, body: { title, body, ...extra } })).data!;
const find = async (who: TestUser, q: string, type?: 'post' | 'project' | 'user') =>
  (await api.search({ client: who.client, query: { q, type, limit: 100 } })).data!.items;

describe('search', () => {
  it('ranks the best match first on a crafted corpus', async () => {
    const inBody = await post(ada, 'Gears', `Notes on cutting gears, with a mention of ${w}.`);
    const inTitle = await post(ada, `The ${w} engine`, `All about the ${w}: the ${w} turns, the ${w} counts.`);
    const inTags = await post(ada, 'Frames', 'Assembling the frame.', { tags: [w] });
    const results = await find(eve, w, 'post');
    expect(results.map((r) => r.id)).toEqual([inTitle.id, inTags.id, inBody.id]);
    expect(results[0]!.score).toBeGreaterThan(results[2]!.score);
    expect(results[0]).toMatchObject({ type: 'post', title: `The ${w} engine`, path: `/api/v1/posts/${inTitle.id}` });
    expect(results[0]!.snippet).toContain(`<mark>${w}</mark>`);
  });

  it('stems English words and searches projects and people too', async () => {
    const project = (
      await api.createProject({
        client: ada.client,
        body: { name: `${w} Foundry`, tagline: 'Casting bells and engines' },
      })
    ).data!;
    const projects = await find(eve, `${w} casts`, 'project');
    expect(projects.map((r) => r.id)).toEqual([project.id]);
    const people = await find(eve, ada.user.username, 'user');
    expect(people[0]).toMatchObject({ type: 'user', id: ada.user.id, path: `/api/v1/users/${ada.user.username}` });
    const all = await find(eve, w);
    expect(new Set(all.map((r) => r.type))).toEqual(new Set(['post', 'project']));
  });

  it('never returns what the caller could not read directly', async () => {
    const secretWord = `${w}secret`;
    const priv = (
      await api.createProject({ client: ada.client, body: { name: `${secretWord} lab`, visibility: 'private' } })
    ).data!;
    const log = await post(ada, `${secretWord} progress`, 'hidden work', { kind: 'build_log', projectId: priv.id });
    const hidden = await post(ada, `${secretWord} spam`, 'buy now');
    await t.db.orm.em.fork().nativeUpdate(Post, { id: hidden.id }, { hiddenAt: new Date() });
    expect(await find(eve, secretWord)).toEqual([]);
    const own = (await find(ada, secretWord)).map((r) => r.id).sort();
    expect(own).toEqual([priv.id, log.id, hidden.id].sort());
  });

  it('pages with a cursor', async () => {
    const word = `${w}page`;
    for (let i = 0; i < 5; i++) await post(ada, `${word} ${i}`, 'x');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await api.search({ client: eve.client, query: { q: word, limit: 2, cursor } })).data!;
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.length).toBe(5);
    expect(new Set(seen).size).toBe(5);
  });

  it('answers bad queries with 400, never a 500', async () => {
    // Stop words only: 400 even where a person's profile holds those very words (people are also matched without stemming).
    await t.db.orm.em.fork().nativeUpdate(User, { id: eve.user.id }, { bio: 'the and of' });
    const cases = ['', 'a'.repeat(201), 'the and of', '"" - or', '!!! ((', '\u0000', "'; drop table posts; --"];
    const statuses = [];
    for (const q of cases)
      statuses.push((await raw(t, 'GET', `/search?q=${encodeURIComponent(q)}`, { token: eve.token })).status);
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses[5]).toBe(400);
    expect(statuses[6]).toBe(200);
    expect((await raw(t, 'GET', '/search', { token: eve.token })).status).toBe(400);
    expect((await raw(t, 'GET', `/search?q=x&type=spaceship`, { token: eve.token })).status).toBe(400);
    expect((await raw(t, 'GET', `/search?q=gears&cursor=eyJvIjo5OTk5OTl9`, { token: eve.token })).status).toBe(400);
  });

  it('escapes snippets: only <mark> is markup', () => {
    expect(markSnippet('<script>alert(1)</script> \u0001gear\u0002')).toBe(
      '&lt;script&gt;alert(1)&lt;/script&gt; <mark>gear</mark>',
    );
  });
});

describe('search and scopes', () => {
  it('returns each kind of result only to keys that could read it directly', async () => {
    const word = `${w}scoped`;
    await api.createProject({ client: ada.client, body: { name: `${word} project` } });
    await post(ada, `${word} post`, 'x');
    await api.createJob({
      client: ada.client,
      body: {
        title: `${word} job`,
        company: 'c',
        description: 'd',
        remotePolicy: 'remote',
        employmentType: 'contract',
        applyUrl: 'https://a.example/j',
      },
    });
    const contentOnly = await userWithKey(t, ['content.read']);
    expect(new Set((await find(contentOnly, word)).map((r) => r.type))).toEqual(new Set(['post']));
    expect(new Set((await find(eve, word)).map((r) => r.type))).toEqual(new Set(['post', 'project', 'job']));
  });
});
