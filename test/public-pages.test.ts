/**
 * The public pages without a browser: what a person without an account may open (a public
 * project, a person, a post, the images they show), and the plain 404 for everything else.
 * test/browser.test.ts opens the project page in Chromium with axe-core.
 */
import { describe, expect, it } from 'vitest';
import { uniqueName, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Post } from '../src/posts/post.entity.js';
import { png } from './fixtures/images.js';
import { signedUpBrowser } from './cookie-browser.js';

const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

const open = (path: string, headers: Record<string, string> = {}) => fetch(`${t.baseUrl}${path}`, { headers });

async function buildLog(projectId: string, title: string, mediaIds: string[] = []) {
  return (
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId, title, body: `Body of ${title}`, mediaIds },
    })
  ).data!;
}

describe('public pages', () => {
  it("shows a public project's page with its feeds in the head, and escapes what its people wrote", async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Loom') } })).data!;
    const evil = await buildLog(project.id, '<script>alert(1)</script>');
    const res = await open(`/p/${project.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    // Read without a session it is everybody's: any cache may keep it, and it sets no cookie.
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(res.headers.get('vary')).toMatch(/cookie/i);
    expect(res.headers.getSetCookie()).toEqual([]);
    const page = await res.text();
    expect(page).toContain(`<meta property="og:title" content="${project.name}">`);
    expect(page).toMatch(
      /<link rel="alternate" type="application\/atom\+xml"[^>]*href="[^"]*\/api\/v1\/feeds\/projects\/[^"]+\.atom">/,
    );
    expect(page).toMatch(/<link rel="alternate" type="application\/feed\+json"[^>]*href="[^"]*\.json">/);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>alert(1)');
    expect(page).toContain(`href="/posts/${evil.id}"`);
  });

  it("is one page for every anonymous reader (a strong ETag, a 304), and the signed-in reader's own", async () => {
    const project = (await api.createProject({ client: ada.client, body: { name: uniqueName('Mill') } })).data!;
    const post = await buildLog(project.id, 'Cogs');
    for (const path of [`/p/${project.id}`, `/u/${ada.user.username}`, `/posts/${post.id}`]) {
      const first = await open(path);
      const etag = first.headers.get('etag')!;
      expect(etag, path).toMatch(/^"[^"]+"$/);
      const text = await first.text();
      // No form, no token: nothing in it is the reader's.
      expect(text).not.toContain('csrf-token');
      const second = await open(path);
      expect(second.headers.get('etag')).toBe(etag);
      expect(await second.text()).toBe(text);
      const again = await open(path, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('cache-control')).toBe('public, max-age=60');
    }
    const before = (await open(`/p/${project.id}`)).headers.get('etag')!;
    await buildLog(project.id, 'Wheels');
    const changed = await open(`/p/${project.id}`, { 'if-none-match': before });
    expect(changed.status).toBe(200);
    // A signed-in reader's page names them and carries their token: theirs alone.
    const { b } = await signedUpBrowser(t.baseUrl);
    const own = await b.get(`/p/${project.id}`);
    expect(own.status).toBe(200);
    expect(own.headers.get('cache-control')).toBe('private, max-age=60');
    expect(own.text).toContain('csrf-token');
    expect(own.text).toContain('Sign out');
  });

  it('is the plain 404 for a private project, a hidden post, an unknown person, naming nothing', async () => {
    const secret = uniqueName('Secret');
    const priv = (await api.createProject({ client: ada.client, body: { name: secret, visibility: 'private' } })).data!;
    const inside = await buildLog(priv.id, secret);
    const pub = (await api.createProject({ client: ada.client, body: { name: uniqueName('Open') } })).data!;
    const hidden = await buildLog(pub.id, 'hidden later');
    await t.db.orm.em.fork().nativeUpdate(Post, { id: hidden.id }, { hiddenAt: new Date() });
    for (const path of [
      `/p/${priv.id}`,
      `/posts/${inside.id}`,
      `/posts/${hidden.id}`,
      '/u/nobody-by-this-name',
      '/p/not-an-id',
      `/media/${priv.id}`,
    ]) {
      const res = await open(path);
      expect(res.status, path).toBe(404);
      const page = await res.text();
      expect(page, path).toContain('Page not found');
      expect(page, path).not.toContain(secret);
    }
    // A hidden build log is not on its project's page either.
    expect(await (await open(`/p/${pub.id}`)).text()).not.toContain('hidden later');
  });

  it("lists a person's public projects and posts, never a private one", async () => {
    const secret = uniqueName('Private');
    await api.createProject({ client: ada.client, body: { name: secret, visibility: 'private' } });
    const shown = (await api.createProject({ client: ada.client, body: { name: uniqueName('Shown') } })).data!;
    const post = (
      await api.createPost({ client: ada.client, body: { title: 'Hello followers', body: 'A **plain** post.' } })
    ).data!;
    const page = await (await open(`/u/${ada.user.username}`)).text();
    expect(page).toContain(`href="/p/${shown.id}"`);
    expect(page).not.toContain(secret);
    expect(page).toContain(`href="/posts/${post.id}"`);
    expect(page).toContain('A plain post.');
    expect(page).toContain(`/api/v1/feeds/users/${ada.user.username}.atom`);
    const one = await (await open(`/posts/${post.id}`)).text();
    expect(one).toContain('<strong>plain</strong>');
  });

  it('serves an image a public build log shows, with its ETag, and no image that only private content shows', async () => {
    const upload = async () =>
      (await api.uploadMedia({ client: ada.client, body: { file: new Blob([new Uint8Array(png(8, 8))]) } })).data!;
    const shown = await upload();
    const secret = await upload();
    const pub = (await api.createProject({ client: ada.client, body: { name: uniqueName('Pics') } })).data!;
    const priv = (
      await api.createProject({ client: ada.client, body: { name: uniqueName('Hid'), visibility: 'private' } })
    ).data!;
    await buildLog(pub.id, 'with a picture', [shown.id]);
    await buildLog(priv.id, 'with a secret picture', [secret.id]);
    const res = await open(`/media/${shown.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // The same for everyone, and no cookie with it: a shared cache may keep it.
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(Buffer.from(await res.arrayBuffer()).equals(png(8, 8))).toBe(true);
    const again = await open(`/media/${shown.id}`, { 'if-none-match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect((await open(`/media/${secret.id}`)).status).toBe(404);
  });
});
