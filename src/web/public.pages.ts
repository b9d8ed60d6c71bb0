/**
 * The public pages, for people without an account: a project (its roadmap, its latest build
 * logs with their images, its owner and members, its feeds), a person (their public projects and
 * posts), a post, and the images those show. Each is read as anybody without a key reads the API
 * (`ANONYMOUS`), through the same services, so a private project or a hidden post is a 404 here
 * as it is there: the plain "Page not found", naming nothing.
 */
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, Response } from 'express';
import type { Member, Milestone, Post, PostSummary, Project, User } from '../../codegen/generated/api/types.gen.js';
import { ANONYMOUS } from '../kernel/actor.js';
import { namesEtag } from '../kernel/etag.js';
import { plural } from '../kernel/text.js';
import { ProblemError } from '../kernel/problem.js';
import { API_BASE } from '../kernel/contract.js';
import { type PublicPaths, publicPaths } from '../kernel/public-paths.js';
import { getProject, listProjects } from '../projects/projects.service.js';
import { listMembers } from '../projects/members.service.js';
import { listMilestones } from '../milestones/milestones.service.js';
import { getPost, listBuildLogs, listPosts } from '../posts/posts.service.js';
import { postHtml } from '../posts/post-html.js';
import { excerptOf } from '../posts/excerpt.js';
import { getUser } from '../users/users.service.js';
import { getMedia, openMedia } from '../media/media.service.js';
import type { MediaStorage } from '../media/storage.js';
import { html, type Html, page, raw, userText, utcMinute } from './views.js';

/** How many build logs and posts a page shows; the feeds and the API have the rest. */
const LATEST = 10;
/**
 * Read by anybody without a session, a page is the same for all of them and sets no cookie: any
 * cache may keep it a minute. A signed-in person's names them in its header and carries their
 * form token: only their own browser may keep it. `Vary: Cookie` tells the two apart.
 */
const SHARED_PAGE_CACHE = 'public, max-age=60';
const OWN_PAGE_CACHE = 'private, max-age=60';
/** An image is the same for everyone and carries no cookie (it is served before the session is read). */
const IMAGE_CACHE = 'public, max-age=60';

/**
 * Sends a public page with a strong ETag of its bytes: a 304 to an If-None-Match that names it.
 * Anonymous, it carries no form token (it has no form) and so makes no pre-session.
 */
function sendPage(req: Request, res: Response, title: string, body: Html, head: Html): void {
  const user = req.web?.user;
  const text = page(title, user, user ? req.web!.csrf : '', body, { head });
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"`;
  const shared = !user && res.getHeader('set-cookie') === undefined;
  res.type('html').set({ 'Cache-Control': shared ? SHARED_PAGE_CACHE : OWN_PAGE_CACHE, Vary: 'Cookie', ETag: etag });
  if (namesEtag(req.header('if-none-match'), etag)) return void res.status(304).end();
  res.send(text);
}

/** A page handler whose 404 (a private project, a hidden post, nobody by that name) is the site's plain one. */
const publicPage =
  (h: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
    h(req, res).catch((err: unknown) => (err instanceof ProblemError && err.status === 404 ? next() : next(err)));
  };

const HEALTH_WORDS: Record<string, string> = { on_track: 'On track', at_risk: 'At risk', off_track: 'Off track' };
const STATUS_WORDS: Record<string, string> = {
  planned: 'Planned',
  in_progress: 'In progress',
  done: 'Done',
  cancelled: 'Cancelled',
};
const words = (table: Record<string, string>, value: string) => table[value] ?? value.replaceAll('_', ' ');

/** OpenGraph and Twitter card tags, and the feeds' discovery links. */
function shareHead(p: { title: string; description: string; url: string; image?: string; feeds?: string }): Html {
  const feeds = p.feeds
    ? html`<link rel="alternate" type="application/atom+xml" title="${p.title} (Atom)" href="${p.feeds}.atom">
<link rel="alternate" type="application/feed+json" title="${p.title} (JSON Feed)" href="${p.feeds}.json">`
    : '';
  return html`<meta name="description" content="${p.description}">
<link rel="canonical" href="${p.url}">
<meta property="og:type" content="website"><meta property="og:site_name" content="Shipyard">
<meta property="og:title" content="${p.title}"><meta property="og:description" content="${p.description}">
<meta property="og:url" content="${p.url}">${p.image ? html`<meta property="og:image" content="${p.image}">` : ''}
<meta name="twitter:card" content="${p.image ? 'summary_large_image' : 'summary'}">
<meta name="twitter:title" content="${p.title}"><meta name="twitter:description" content="${p.description}">
${feeds}`;
}

function feedLinks(feedBase: string, what: string): Html {
  return html`<p>Follow ${what}: <a href="${feedBase}.atom">Atom feed</a> · <a href="${feedBase}.json">JSON Feed</a></p>`;
}

function healthLine(project: Project): Html {
  const health = project.health
    ? html`<span class="badge health-${project.health.status}">${words(HEALTH_WORDS, project.health.status)}</span>
      since ${utcMinute(project.health.setAt)}`
    : html`No health reported yet`;
  const last =
    project.daysSinceLastBuildLog === null
      ? 'no build log yet'
      : `last build log ${project.daysSinceLastBuildLog === 0 ? 'today' : `${plural(project.daysSinceLastBuildLog, 'day')} ago`}${project.stale ? ' (stale)' : ''}`;
  return html`<p class="meta">${health} · ${last}</p>`;
}

function milestoneItem(m: Milestone): Html {
  const dates = [
    m.startDate ? `starts ${m.startDate}` : '',
    m.dueDate ? `due ${m.dueDate}` : '',
    m.completedAt ? `done ${m.completedAt.slice(0, 10)}` : '',
  ].filter(Boolean);
  const history = m.dueDateHistory;
  const slip =
    history?.slipDays == null ? '' : `, ${history.slipDays >= 0 ? '+' : ''}${plural(history.slipDays, 'day')}`;
  const slipped = history
    ? ` · moved ${plural(history.moves, 'time')}${slip}${history.lastReason ? ` (last: ${history.lastReason})` : ''}`
    : '';
  return html`<li id="milestone-${m.id}"><strong>${userText(m.title)}</strong>
    <span class="badge status-${m.status}">${words(STATUS_WORDS, m.status)}</span>
    ${m.overdue ? html`<span class="badge overdue">Overdue</span>` : ''}
    <div class="meta">${dates.join(' · ') || 'no dates'}${slipped}</div>
    ${m.description ? html`<div class="post-body">${raw(postHtml(m.description))}</div>` : ''}</li>`;
}

function images(post: Post, paths: PublicPaths): Html {
  return html`${post.mediaIds.map(
    (id, i) =>
      html`<p><img src="${paths.media(id)}" alt="Image ${i + 1} of ${post.mediaIds.length} in “${post.title}”" loading="lazy"></p>`,
  )}`;
}

function buildLogArticle(post: Post, paths: PublicPaths): Html {
  return html`<article class="build-log" aria-labelledby="log-${post.id}">
    <h3 id="log-${post.id}"><a href="${paths.post(post.id)}">${userText(post.title)}</a></h3>
    <p class="meta">${utcMinute(post.createdAt)} by <a href="${paths.user(post.author.username)}">${userText(post.author.displayName)}</a>${
      post.health ? html` · <span class="badge health-${post.health}">${words(HEALTH_WORDS, post.health)}</span>` : ''
    }</p>
    <div class="post-body">${raw(postHtml(post.body))}</div>${images(post, paths)}</article>`;
}

/**
 * Links and images within the site are paths, so a page works under whichever name the server
 * was reached by; what leaves the site (the share tags, the feeds' discovery links) is absolute,
 * on PUBLIC_URL.
 */
const here = publicPaths('');

function projectPage(site: string) {
  const paths = publicPaths(site);
  return publicPage(async (req, res) => {
    const projectId = String(req.params.projectId);
    const project = await getProject(req.em, ANONYMOUS, projectId);
    const [roadmap, logs, team] = await Promise.all([
      listMilestones(req.em, ANONYMOUS, projectId, { limit: 100 }),
      listBuildLogs(req.em, ANONYMOUS, projectId, { limit: LATEST, view: 'full' }),
      listMembers(req.em, ANONYMOUS, projectId, { limit: 100 }),
    ]);
    const feedBase = `${site}${API_BASE}/feeds/projects/${project.id}`;
    const firstImage = logs.items.find((p) => p.mediaIds.length)?.mediaIds[0];
    const head = shareHead({
      title: project.name,
      description: project.tagline || excerptOf(project.description) || `${project.name}, on Shipyard.`,
      url: paths.project(project.id),
      ...(firstImage ? { image: paths.media(firstImage) } : {}),
      feeds: feedBase,
    });
    const body = html`<h1>${userText(project.name)}</h1>
  ${project.tagline ? html`<p class="tagline">${userText(project.tagline)}</p>` : ''}
  ${healthLine(project)}
  ${feedLinks(`${API_BASE}/feeds/projects/${project.id}`, 'this project')}
  ${project.description ? html`<div class="post-body">${raw(postHtml(project.description))}</div>` : ''}
  <section aria-labelledby="roadmap"><h2 id="roadmap">Roadmap</h2>
  ${
    roadmap.items.length
      ? html`<ol class="roadmap">${roadmap.items.map(milestoneItem)}</ol>${
          roadmap.nextCursor ? html`<p class="hint">The roadmap goes on; the first 100 steps are shown.</p>` : ''
        }`
      : html`<p>No milestones yet.</p>`
  }</section>
  <section aria-labelledby="build-logs"><h2 id="build-logs">Latest build logs</h2>
  ${logs.items.length ? logs.items.map((p) => buildLogArticle(p, here)) : html`<p>No build logs yet.</p>`}
  ${logs.nextCursor ? html`<p class="hint">Older build logs are in the feeds.</p>` : ''}</section>
  <section aria-labelledby="team"><h2 id="team">Team</h2>
  <ul class="people">${team.items.map(
    (m: Member) =>
      html`<li><a href="${here.user(m.user.username)}">${userText(m.user.displayName)}</a> (${m.role === 'owner' ? 'owner' : 'member'})</li>`,
  )}</ul></section>`;
    sendPage(req, res, project.name, body, head);
  });
}

function postItem(post: PostSummary, paths: PublicPaths): Html {
  return html`<li><a href="${paths.post(post.id)}">${userText(post.title)}</a>
    <span class="meta">${utcMinute(post.createdAt)}${post.kind === 'build_log' ? ' · build log' : ''}</span>
    ${post.excerpt ? html`<div class="meta">${userText(post.excerpt)}</div>` : ''}</li>`;
}

function userPage(site: string) {
  const paths = publicPaths(site);
  return publicPage(async (req, res) => {
    const user: User = await getUser(req.em, String(req.params.username));
    const { id } = user;
    const [projects, posts] = await Promise.all([
      listProjects(req.em, ANONYMOUS, { ownerId: id, limit: 50 }),
      listPosts(req.em, ANONYMOUS, { authorId: id, limit: LATEST, view: 'summary' }),
    ]);
    const feedBase = `${site}${API_BASE}/feeds/users/${encodeURIComponent(user.username)}`;
    const head = shareHead({
      title: `${user.displayName} (@${user.username})`,
      description: user.bio || `${user.displayName} builds on Shipyard.`,
      url: paths.user(user.username),
      feeds: feedBase,
    });
    const body = html`<h1>${userText(user.displayName)} <span class="meta">@${user.username}</span></h1>
  ${user.bio ? html`<p class="tagline">${userText(user.bio)}</p>` : ''}
  ${feedLinks(`${API_BASE}/feeds/users/${encodeURIComponent(user.username)}`, `${user.displayName}'s posts`)}
  <section aria-labelledby="projects"><h2 id="projects">Projects</h2>
  ${
    projects.items.length
      ? html`<ul>${projects.items.map(
          (p: Project) =>
            html`<li><a href="${here.project(p.id)}">${userText(p.name)}</a>${p.tagline ? html` — ${userText(p.tagline)}` : ''}</li>`,
        )}</ul>`
      : html`<p>No public projects yet.</p>`
  }</section>
  <section aria-labelledby="posts"><h2 id="posts">Latest posts</h2>
  ${posts.items.length ? html`<ul>${posts.items.map((p) => postItem(p, here))}</ul>` : html`<p>No posts yet.</p>`}</section>`;
    sendPage(req, res, `${user.displayName} (@${user.username})`, body, head);
  });
}

function postPage(site: string) {
  const paths = publicPaths(site);
  return publicPage(async (req, res) => {
    const post = await getPost(req.em, ANONYMOUS, String(req.params.postId));
    const project = post.projectId ? await getProject(req.em, ANONYMOUS, post.projectId) : null;
    const head = shareHead({
      title: post.title,
      description: excerptOf(post.body) || post.title,
      url: paths.post(post.id),
      ...(post.mediaIds[0] ? { image: paths.media(post.mediaIds[0]) } : {}),
      feeds: project
        ? `${site}${API_BASE}/feeds/projects/${project.id}`
        : `${site}${API_BASE}/feeds/users/${encodeURIComponent(post.author.username)}`,
    });
    const body = html`<article aria-labelledby="title"><h1 id="title">${userText(post.title)}</h1>
  <p class="meta">${utcMinute(post.createdAt)} by <a href="${here.user(post.author.username)}">${userText(post.author.displayName)}</a>${
    project ? html` · a build log of <a href="${here.project(project.id)}">${userText(project.name)}</a>` : ''
  }</p>
  <div class="post-body">${raw(postHtml(post.body))}</div>${images(post, here)}</article>`;
    sendPage(req, res, post.title, body, head);
  });
}

/** An image a public page or a feed shows: served to anybody only while something anybody may read shows it. */
function mediaContent(storage: MediaStorage) {
  return publicPage(async (req, res) => {
    const media = await getMedia(req.em, ANONYMOUS, String(req.params.mediaId));
    const etag = `"${media.sha256}"`;
    res.set({ ETag: etag, 'Cache-Control': IMAGE_CACHE, 'X-Content-Type-Options': 'nosniff' });
    if (namesEtag(req.header('if-none-match'), etag)) {
      res.status(304).end();
      return;
    }
    res.type(media.contentType).set('Content-Length', String(media.byteSize));
    await pipeline(await openMedia(storage, media), res).catch((err: NodeJS.ErrnoException) => {
      // The reader went away before the last byte: nothing to answer.
      if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    });
  });
}

export function publicPages(site: string, storage: MediaStorage) {
  return {
    project: projectPage(site),
    user: userPage(site),
    post: postPage(site),
    media: mediaContent(storage),
  };
}
