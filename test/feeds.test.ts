import { describe, expect, it } from 'vitest';
import { parseFeed } from '@rowanmanning/feed-parser';
import { parseAtomFeed } from 'feedsmith';
import { raw, uniqueName, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { createClient } from '../codegen/generated/api/client/index.js';
import { Post } from '../src/posts/post.entity.js';
import { jsonFeedProblems } from './json-feed.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** PUBLIC_URL: every address the server hands out is on it. */
const SITE = 'http://shipyard.test';

const {
  t,
  users: { ada, grace },
} = useServer({ users: { ada: 'all', grace: 'all' }, publicUrl: SITE });

/** A feed read without a key, as a feed reader reads it. */
const feed = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${t.apiUrl}/feeds/${path}`, { headers: { 'user-agent': 'FeedReader/1.0', ...headers } });

/** A public project with a roadmap (one added, one done, one moved with a reason) and two build logs. */
async function roadmapProject() {
  const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Engine') } })).data!;
  const path = { projectId: project.id };
  const gears = (
    await api.createMilestone({ client: ada.client, path, body: { title: 'Gears', dueDate: '2027-03-01' } })
  ).data!;
  await api.updateMilestone({
    client: ada.client,
    path: { ...path, milestoneId: gears.id },
    body: { dueDate: '2027-04-15', dueDateReason: 'The card punch maker is booked' },
  });
  const mill = (await api.createMilestone({ client: ada.client, path, body: { title: 'Mill' } })).data!;
  await api.updateMilestone({ client: ada.client, path: { ...path, milestoneId: mill.id }, body: { status: 'done' } });
  const log = async (title: string, body: string) =>
    (
      await api.createPost({
        client: ada.client,
        body: { kind: 'build_log', projectId: project.id, title, body, tags: ['hardware'] },
      })
    ).data!;
  const first = await log('First carry', 'The **carry** works. See [the PR](https://example.com/pr/7).');
  const evil = await log('<script>alert(1)</script>', '<script>alert(2)</script> <img src=x onerror=alert(3)>');
  return { project, gears, mill, first, evil };
}

describe('feeds', () => {
  it('serves a public project as Atom 1.0: build logs and roadmap events, text escaped, parsed without error', async () => {
    const { project, first, evil, gears, mill } = await roadmapProject();
    const res = await feed(`projects/${project.id}.atom`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const xml = await res.text();
    const parsed = parseFeed(xml);
    expect(parsed.meta.type).toBe('atom');
    expect(parsed.title).toBe(project.name);
    const strict = parseAtomFeed(xml);
    expect(strict.id).toBe(`urn:uuid:${project.id}`);
    expect(strict.links?.find((l) => l.rel === 'self')?.href).toMatch(
      new RegExp(`^https?://[^/]+/api/v1/feeds/projects/${project.id}\\.atom$`),
    );
    const titles = parsed.items.map((i) => i.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'First carry',
        '<script>alert(1)</script>',
        'Milestone added: Gears',
        'Milestone moved: Gears',
        'Milestone added: Mill',
        'Milestone done: Mill',
      ]),
    );
    const ids = parsed.items.map((i) => i.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        `urn:uuid:${first.id}`,
        `urn:uuid:${evil.id}`,
        `urn:uuid:${gears.id}`,
        `urn:uuid:${mill.id}`,
      ]),
    );
    expect(new Set(ids).size).toBe(ids.length);
    // Titles are text: a reader shows "<script>" as characters. No script reaches the HTML content.
    for (const title of xml.matchAll(/<title[^>]*>/g)) expect(title[0]).toBe('<title type="text">');
    // The HTML as the document carries it (feed-parser hands content over with its entities decoded).
    const evilEntry = strict.entries?.find((e) => e.id === `urn:uuid:${evil.id}`);
    const evilHtml = JSON.stringify(evilEntry?.content);
    expect(evilHtml).not.toMatch(/<script|<img[^>]*onerror/i);
    expect(evilHtml).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    const moved = parsed.items.find((i) => i.title === 'Milestone moved: Gears')!;
    expect(moved.content).toContain('moved from 2027-03-01 to 2027-04-15 (45 days later)');
    expect(moved.content).toContain('The card punch maker is booked');
    // The added entry keeps the date the milestone was added with: the move tells the rest.
    const added = parsed.items.find((i) => i.title === 'Milestone added: Gears')!;
    expect(added.content).toContain('Due 2027-03-01.');
    expect(added.content).not.toContain('2027-04-15');
    const carry = parsed.items.find((i) => i.id === `urn:uuid:${first.id}`)!;
    expect(carry.content).toContain('<strong>carry</strong>');
    expect(carry.content).toContain('href="https://example.com/pr/7"');
    expect(carry.categories.map((c) => c.term)).toEqual(['build_log', 'hardware']);
    // Newest first, by when each happened.
    const dates = parsed.items.map((i) => i.published!.getTime());
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
  });

  it('serves the same feed as JSON Feed 1.1, valid by its rules', async () => {
    const { project, evil } = await roadmapProject();
    const res = await feed(`projects/${project.id}.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/feed+json; charset=utf-8');
    const body = await res.json();
    expect(jsonFeedProblems(body)).toEqual([]);
    expect(body.title).toBe(project.name);
    expect(body.items).toHaveLength(6);
    const item = body.items.find((i: { id: string }) => i.id === `urn:uuid:${evil.id}`);
    expect(item.title).toBe('<script>alert(1)</script>');
    expect(item.content_html).not.toMatch(/<script|<img[^>]*onerror/i);
    expect(item.content_html).toContain('&lt;img src=x onerror=alert(3)&gt;');
    expect(item.summary).toBe('');
    expect(body).not.toHaveProperty('next_url');
  });

  it('pages with a next link (Atom rel="next", JSON Feed next_url), no entry twice, none left out', async () => {
    const { project } = await roadmapProject();
    const seen: string[] = [];
    let next: string | undefined = `${t.apiUrl}/feeds/projects/${project.id}.json?limit=2`;
    while (next) {
      const page = await (await fetch(next)).json();
      expect(jsonFeedProblems(page)).toEqual([]);
      seen.push(...page.items.map((i: { id: string }) => i.id));
      next = page.next_url;
      if (next) next = `${t.apiUrl}${new URL(next).pathname.replace('/api/v1', '')}${new URL(next).search}`;
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    const atom = parseAtomFeed(await (await feed(`projects/${project.id}.atom?limit=2`)).text());
    const nextLink = atom.links?.find((l) => l.rel === 'next')?.href;
    expect(nextLink).toMatch(/\.atom\?limit=2&cursor=/);
    expect(atom.links?.find((l) => l.rel === 'first')?.href).toMatch(/\.atom\?limit=2$/);
  });

  it('keeps only the kinds asked for', async () => {
    const { project } = await roadmapProject();
    const done = await (await feed(`projects/${project.id}.json?kinds=milestone_done`)).json();
    expect(done.items.map((i: { title: string }) => i.title)).toEqual(['Milestone done: Mill']);
    const two = await (await feed(`projects/${project.id}.json?kinds=milestone_moved,build_log`)).json();
    expect(two.items.map((i: { tags: string[] }) => i.tags[0]).sort()).toEqual([
      'build_log',
      'build_log',
      'milestone_moved',
    ]);
    const bad = await feed(`projects/${project.id}.json?kinds=secrets`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('reads past the parameters a pasted address carries (utm_*, a cache-buster), and still checks its own', async () => {
    const { project } = await roadmapProject();
    for (const format of ['atom', 'json']) {
      const plain = await feed(`projects/${project.id}.${format}?limit=5`);
      const pasted = await feed(
        `projects/${project.id}.${format}?utm_source=newsletter&utm_medium=email&_=1764547200&limit=5`,
      );
      expect(pasted.status).toBe(200);
      // The same page: the parameters it does not take are not read.
      expect(pasted.headers.get('etag')).toBe(plain.headers.get('etag'));
      expect(await pasted.text()).toBe(await plain.text());
      const wrong = await feed(`projects/${project.id}.${format}?utm_source=x&limit=abc`);
      expect(wrong.status).toBe(400);
      expect(wrong.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await feed(`users/${ada.user.username}.atom?utm_campaign=launch`)).status).toBe(200);
    expect((await feed('tags/hardware.json?fbclid=abc')).status).toBe(200);
    // The keyed API still refuses what an operation does not take (test/error-matrix.test.ts, each one).
    expect((await raw(t, 'GET', `/projects/${project.id}?utm_source=x`, { token: ada.token })).status).toBe(400);
  });

  it('answers 304 to If-None-Match and If-Modified-Since, and a new ETag once an entry changes', async () => {
    const { project } = await roadmapProject();
    for (const format of ['atom', 'json']) {
      const path = `projects/${project.id}.${format}`;
      const first = await feed(path);
      const etag = first.headers.get('etag')!;
      const lastModified = first.headers.get('last-modified')!;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(new Date(lastModified).getTime()).not.toBeNaN();
      expect(first.headers.get('cache-control')).toBe('public, max-age=60');
      const byTag = await feed(path, { 'if-none-match': etag });
      expect(byTag.status).toBe(304);
      expect(await byTag.text()).toBe('');
      expect(byTag.headers.get('etag')).toBe(etag);
      expect((await feed(path, { 'if-none-match': `"other", W/${etag}` })).status).toBe(304);
      expect((await feed(path, { 'if-modified-since': lastModified })).status).toBe(304);
      expect((await feed(path, { 'if-modified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' })).status).toBe(200);
      // If-None-Match wins: a tag that does not match is a 200 whatever the date says.
      expect((await feed(path, { 'if-none-match': '"stale"', 'if-modified-since': lastModified })).status).toBe(200);
    }
    const before = (await feed(`projects/${project.id}.atom`)).headers.get('etag')!;
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: project.id, title: 'More', body: 'x' },
    });
    const after = await feed(`projects/${project.id}.atom`, { 'if-none-match': before });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
  });

  it('moves Last-Modified forward when an entry leaves the page, never back: a reader dating its copy gets the change', async () => {
    const { project, gears, first, evil } = await roadmapProject();
    const path = `projects/${project.id}.atom`;
    const dated = async (headers: Record<string, string> = {}) => {
      const res = await feed(path, headers);
      return { status: res.status, lastModified: res.headers.get('last-modified'), text: await res.text() };
    };
    /**
     * The page after a change, asked with the date of the copy before it: a 200, never a 304, and
     * a later date, once the clock has reached it (a mark moved twice in a second runs ahead).
     */
    const changedSince = async (since: string) => {
      const answer = await dated({ 'if-modified-since': since });
      expect(answer.status).toBe(200);
      let { lastModified } = answer;
      for (let i = 0; !lastModified && i < 50; i++) {
        await new Promise((r) => setTimeout(r, 100));
        lastModified = (await dated()).lastModified;
      }
      expect(Date.parse(lastModified!)).toBeGreaterThan(Date.parse(since));
      return { ...answer, lastModified: lastModified! };
    };
    const seen = await dated();
    expect(seen.lastModified).not.toBeNull();
    expect((await dated({ 'if-modified-since': seen.lastModified! })).status).toBe(304);

    // An older entry deleted: the newest entry's time stands still, the page's date does not.
    await api.deletePost({ client: ada.client, path: { postId: first.id } });
    const afterDelete = await changedSince(seen.lastModified!);
    expect(afterDelete.text).not.toContain(first.id);

    // The newest entry hidden: its time would take the date back; the mark goes on.
    await t.db.orm.em.fork().nativeUpdate(Post, { id: evil.id }, { hiddenAt: new Date() });
    const afterHide = await changedSince(afterDelete.lastModified);
    expect(afterHide.text).not.toContain(evil.id);

    // The last milestone deleted (its events leave; nothing else moves).
    await api.deleteMilestone({ client: ada.client, path: { projectId: project.id, milestoneId: gears.id } });
    const afterMilestone = await changedSince(afterHide.lastModified);
    expect(afterMilestone.text).not.toContain(gears.id);

    // Unchanged since: a 304 by date, and the same date every time it is asked.
    const again = await dated({ 'if-modified-since': afterMilestone.lastModified! });
    expect(again).toMatchObject({ status: 304, lastModified: afterMilestone.lastModified });
    // The other format and a page a cursor reaches: the format shares the page's date; a later page carries none.
    const json = await feed(`projects/${project.id}.json`, { 'if-modified-since': afterMilestone.lastModified! });
    expect(json.status).toBe(304);
    const small = await (await feed(`projects/${project.id}.json?limit=1`)).json();
    const next = await feed(small.next_url.replace(`${SITE}/api/v1/feeds/`, ''));
    expect(next.status).toBe(200);
    expect(next.headers.get('last-modified')).toBeNull();
  });

  it('never dates a page later than its answer, nor a length other than the default; a mark it cannot write costs the date only', async () => {
    const { project } = await roadmapProject();
    const path = `projects/${project.id}.atom`;
    // Changes faster than a second: each mark is a second past the one before, and no answer
    // carries a date later than its own.
    let last = (await feed(path)).headers.get('last-modified')!;
    for (let i = 0; i < 4; i++) {
      await api.updateProject({ client: ada.client, path: { projectId: project.id }, body: { tagline: `t${i}` } });
      const res = await feed(path, { 'if-modified-since': last });
      expect(res.status).toBe(200);
      const lastModified = res.headers.get('last-modified');
      if (lastModified) {
        expect(Date.parse(lastModified)).toBeLessThanOrEqual(Date.parse(res.headers.get('date')!));
        last = lastModified;
      }
    }
    expect((await feed(`projects/${project.id}.atom?limit=5`)).headers.get('last-modified')).toBeNull();
    // The marks cannot be written: the feed still goes out, validated by its ETag.
    const em = t.db.orm.em.fork();
    await em.getConnection().execute('alter table feed_marks add constraint no_marks check (false) not valid');
    try {
      await api.updateProject({ client: ada.client, path: { projectId: project.id }, body: { tagline: 'unmarked' } });
      const res = await feed(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('last-modified')).toBeNull();
      expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
      expect(await res.text()).toContain('unmarked');
    } finally {
      await em.getConnection().execute('alter table feed_marks drop constraint no_marks');
    }
  });

  it('never shows a hidden build log, and says the feed changed when one is hidden', async () => {
    const { project, first } = await roadmapProject();
    const before = await feed(`projects/${project.id}.json`);
    const etag = before.headers.get('etag')!;
    await t.db.orm.em.fork().nativeUpdate(Post, { id: first.id }, { hiddenAt: new Date() });
    const after = await feed(`projects/${project.id}.json`, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    const ids = (await after.json()).items.map((i: { id: string }) => i.id);
    expect(ids).not.toContain(`urn:uuid:${first.id}`);
    const user = await (await feed(`users/${ada.user.username}.json?limit=50`)).json();
    expect(user.items.map((i: { id: string }) => i.id)).not.toContain(`urn:uuid:${first.id}`);
  });

  it('is a 404 that names nothing for a private, deleted or unknown project', async () => {
    const secret = uniqueName('Secret');
    const priv = (await api.createProject({ client: ada.client, body: { name: secret, visibility: 'private' } })).data!;
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: priv.id, title: secret, body: secret },
    });
    const gone = (await api.createProject({ client: ada.client, body: { name: uniqueName('Gone') } })).data!;
    await api.deleteProject({ client: ada.client, path: { projectId: gone.id } });
    for (const id of [priv.id, gone.id, '00000000-0000-4000-8000-000000000000'])
      for (const format of ['atom', 'json']) {
        const res = await feed(`projects/${id}.${format}`);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const body = await res.text();
        expect(body).not.toContain(secret);
        expect(body).not.toContain(ada.user.username);
      }
    // The private project's build log is in no one's feed either.
    const user = await (await feed(`users/${ada.user.username}.json?limit=50`)).text();
    expect(user).not.toContain(secret);
  });

  it("serves a person's and a tag's public posts and build logs, both formats", async () => {
    const tag = uniqueName('tag')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 30);
    const post = (
      await api.createPost({ client: grace.client, body: { title: 'Plain post', body: 'Hello', tags: [tag] } })
    ).data!;
    const project = (await api.createProject({ client: grace.client, body: { name: uniqueName('G') } })).data!;
    const log = (
      await api.createPost({
        client: grace.client,
        body: { kind: 'build_log', projectId: project.id, title: 'A build log', body: 'Work', tags: [tag] },
      })
    ).data!;
    for (const path of [`users/${grace.user.username}`, `tags/${tag}`, `tags/${tag.toUpperCase()}`]) {
      const json = await (await feed(`${path}.json`)).json();
      expect(jsonFeedProblems(json)).toEqual([]);
      expect(json.items.map((i: { id: string }) => i.id)).toEqual([`urn:uuid:${log.id}`, `urn:uuid:${post.id}`]);
      const atom = parseFeed(await (await feed(`${path}.atom`)).text());
      expect(atom.items.map((i) => i.id)).toEqual([`urn:uuid:${log.id}`, `urn:uuid:${post.id}`]);
      const logsOnly = await (await feed(`${path}.json?kinds=build_log`)).json();
      expect(logsOnly.items.map((i: { id: string }) => i.id)).toEqual([`urn:uuid:${log.id}`]);
    }
    expect((await feed('users/nobody-at-all-here.atom')).status).toBe(404);
    expect((await feed(`tags/${'x'.repeat(40)}.json`)).status).toBe(400);
  });

  it('needs no key and reads none: a revoked key sent along changes nothing', async () => {
    const { project } = await roadmapProject();
    const anonymous = await feed(`projects/${project.id}.json`);
    const withKey = await feed(`projects/${project.id}.json`, { authorization: 'Bearer shipyard_pat_nonsense' });
    expect(withKey.status).toBe(200);
    expect(withKey.headers.get('etag')).toBe(anonymous.headers.get('etag'));
    expect((await raw(t, 'GET', `/feeds/projects/${project.id}.json`)).status).toBe(200);
  });

  it('hands out the page and feed addresses: in the project and user answers and list_my_projects', async () => {
    const { project } = await roadmapProject();
    const read = (await api.getProject({ client: grace.client, path: { projectId: project.id } })).data!;
    expect(read.publicUrls).toEqual({
      page: `${SITE}/p/${project.id}`,
      atomFeed: `${SITE}/api/v1/feeds/projects/${project.id}.atom`,
      jsonFeed: `${SITE}/api/v1/feeds/projects/${project.id}.json`,
    });
    // Each one opens, on this server.
    for (const url of Object.values(read.publicUrls!)) {
      const res = await fetch(url.replace(SITE, t.baseUrl));
      expect(res.status, url).toBe(200);
    }
    const person = (await api.getUser({ client: grace.client, path: { username: ada.user.username } })).data!;
    expect(person.publicUrls).toEqual({
      page: `${SITE}/u/${ada.user.username}`,
      atomFeed: `${SITE}/api/v1/feeds/users/${ada.user.username}.atom`,
      jsonFeed: `${SITE}/api/v1/feeds/users/${ada.user.username}.json`,
    });
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('P'), visibility: 'private' } })
    ).data!;
    expect(priv.publicUrls).toBeNull();
    const client = new Client({ name: 'feeds-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ada.token}` } },
      }),
    );
    const mine = await client.callTool({ name: 'list_my_projects', arguments: { limit: 100 } });
    const listed = (mine.structuredContent as { items: { id: string; publicUrls?: unknown }[] }).items;
    expect(listed.find((p) => p.id === project.id)?.publicUrls).toEqual(read.publicUrls);
    expect(listed.find((p) => p.id === priv.id)).not.toHaveProperty('publicUrls');
    expect((mine.content as { text: string }[])[0]!.text).toContain(`${SITE}/p/${project.id}`);
    await client.close();
  });

  it('refuses a cursor that was tampered with (400), whatever it names', async () => {
    const { project } = await roadmapProject();
    const other = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('Hidden'), visibility: 'private' } })
    ).data!;
    await api.createMilestone({ client: ada.client, path: { projectId: other.id }, body: { title: 'Secret step' } });
    const first = await (await feed(`projects/${project.id}.json?limit=2`)).json();
    const cursor = new URL(first.next_url).searchParams.get('cursor')!;
    const real = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const forge = (change: object) => Buffer.from(JSON.stringify({ ...real, ...change })).toString('base64url');
    for (const change of [
      { source: other.id },
      { limit: 100_000_000 },
      { at: '1' },
      { key: '-'.repeat(36) },
      { kind: 'post' },
      { at: 3 },
    ]) {
      const res = await feed(`projects/${project.id}.json?limit=2&cursor=${forge(change)}`);
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(await res.text()).not.toContain('Secret step');
    }
    // The real cursor still reads the next page.
    expect((await feed(`projects/${project.id}.json?limit=2&cursor=${cursor}`)).status).toBe(200);
  });

  it('answers an empty feed with an empty items list, and the same ETag for the kinds in any order', async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Empty') } })).data!;
    const empty = await (await feed(`projects/${project.id}.json`)).json();
    expect(jsonFeedProblems(empty)).toEqual([]);
    expect(empty.items).toEqual([]);
    const atom = parseAtomFeed(await (await feed(`projects/${project.id}.atom`)).text());
    expect(atom.entries ?? []).toEqual([]);
    const tag = await (await feed('tags/nothing-tagged-so.json')).json();
    expect(tag.items).toEqual([]);
    const ab = await feed(`projects/${project.id}.json?kinds=build_log,milestone_done`);
    const ba = await feed(`projects/${project.id}.json?kinds=milestone_done,build_log`);
    expect(ab.headers.get('etag')).toBe(ba.headers.get('etag'));
  });

  it("links a move to its milestone on the page, keeps the feed's own address on every page, drops what XML cannot carry", async () => {
    const { project, gears } = await roadmapProject();
    const moved = await (await feed(`projects/${project.id}.json?kinds=milestone_moved`)).json();
    expect(moved.items[0].url).toBe(`${SITE}/p/${project.id}#milestone-${gears.id}`);
    const first = await (await feed(`projects/${project.id}.json?limit=2`)).json();
    const second = await (await fetch(first.next_url.replace(SITE, t.baseUrl))).json();
    expect(second.feed_url).toBe(first.feed_url);
    expect(first.feed_url).toBe(`${SITE}/api/v1/feeds/projects/${project.id}.json?limit=2`);
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: project.id, title: 'Bell', body: 'ding\u0007dong' },
    });
    const xml = await (await feed(`projects/${project.id}.atom`)).text();
    expect(xml).not.toContain('\u0007');
    expect(parseFeed(xml).items.find((i) => i.title === 'Bell')?.content).toContain('dingdong');
  });

  it("says a person's feed changed when a project its build logs name is renamed", async () => {
    const { project } = await roadmapProject();
    const before = (await feed(`users/${ada.user.username}.json?limit=50`)).headers.get('etag')!;
    await api.updateProject({
      client: ada.client,
      path: { projectId: project.id },
      body: { name: uniqueName('Renamed') },
    });
    const after = await feed(`users/${ada.user.username}.json?limit=50`, { 'if-none-match': before });
    expect(after.status).toBe(200);
  });

  it('reads a feed through the generated SDK: the document as text, then a 304 for the same ETag', async () => {
    const { project } = await roadmapProject();
    const client = createClient({ baseUrl: t.apiUrl });
    const first = await api.getProjectAtomFeed({ client, path: { projectId: project.id }, parseAs: 'text' });
    expect(first.response?.status).toBe(200);
    expect(typeof first.data).toBe('string');
    expect(first.data).toContain('<feed xmlns="http://www.w3.org/2005/Atom"');
    const etag = first.response!.headers.get('etag')!;
    const again = await api.getProjectAtomFeed({
      client,
      path: { projectId: project.id },
      headers: { 'If-None-Match': etag },
      parseAs: 'text',
    });
    expect(again.response?.status).toBe(304);
    const json = await api.getProjectJsonFeed({ client, path: { projectId: project.id } });
    expect(jsonFeedProblems(json.data)).toEqual([]);
  });
});
