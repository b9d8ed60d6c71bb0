/**
 * The administrators' moderation page: the newest posts and comments, hidden ones marked, each
 * with a Hide or Unhide button; hidden ones older than those; and any other by its id. The same service as the session-only API operations (moderation.service.ts).
 */
import type { Request, Response } from 'express';
import { Post } from '../posts/post.entity.js';
import { Comment } from '../comments/comment.entity.js';
import { setCommentHidden, setPostHidden } from '../moderation/moderation.service.js';
import { ProblemError } from '../kernel/problem.js';
import type { Actor } from '../kernel/actor.js';
import { errorList, html, page, userText, type Html } from './views.js';

/** How many of the newest posts and comments the page lists to act on. */
const RECENT = 30;
const day = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');

type Item = {
  kind: 'post' | 'comment';
  id: string;
  text: string;
  author: string;
  createdAt: Date;
  hiddenAt: Date | null | undefined;
};

/** One button that hides a visible item or unhides a hidden one. */
function toggle(item: Item, csrf: string): Html {
  const action = item.hiddenAt ? 'unhide' : 'hide';
  return html`<form method="post" action="/admin/moderation">
      <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="kind" value="${item.kind}">
      <input type="hidden" name="id" value="${item.id}"><input type="hidden" name="action" value="${action}">
      <button type="submit" class="${item.hiddenAt ? '' : 'danger'}">${item.hiddenAt ? 'Unhide' : 'Hide'}<span class="visually-hidden"> ${item.kind}: ${userText(item.text)}</span></button></form>`;
}

function itemTable(caption: string, heading: string, items: Item[], csrf: string): Html {
  if (!items.length) return html`<p>None.</p>`;
  return html`<table><caption class="hint">${caption}</caption>
      <thead><tr><th scope="col">${heading}</th><th scope="col">Author</th><th scope="col">Written</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>
      ${items.map(
        (item) => html`<tr>
        <td data-label="${heading}">${userText(item.text)} <code class="hint">${item.id}</code></td>
        <td data-label="Author">${userText(item.author)}</td>
        <td data-label="Written"><span class="nowrap">${day(item.createdAt)} UTC</span></td>
        <td data-label="Status">${item.hiddenAt ? html`<span class="status-revoked">hidden <span class="nowrap">${day(item.hiddenAt)} UTC</span></span>` : 'visible'}</td>
        <td>${toggle(item, csrf)}</td></tr>`,
      )}</tbody></table>`;
}

/** The newest posts and comments (hidden ones marked), and hidden ones older than those. */
async function items(req: Request) {
  const posts = await req.em.find(Post, {}, { orderBy: { createdAt: 'desc' }, limit: RECENT, populate: ['author'] });
  const comments = await req.em.find(
    Comment,
    { deletedAt: null },
    { orderBy: { createdAt: 'desc' }, limit: RECENT, populate: ['author'] },
  );
  const olderHiddenPosts = await req.em.find(
    Post,
    { hiddenAt: { $ne: null }, id: { $nin: posts.map((p) => p.id) } },
    { orderBy: { hiddenAt: 'desc' }, limit: 50, populate: ['author'] },
  );
  const olderHiddenComments = await req.em.find(
    Comment,
    { hiddenAt: { $ne: null }, id: { $nin: comments.map((c) => c.id) } },
    { orderBy: { hiddenAt: 'desc' }, limit: 50, populate: ['author'] },
  );
  const post = (p: Post): Item => ({
    kind: 'post',
    id: p.id,
    text: p.title,
    author: p.author.username,
    createdAt: p.createdAt,
    hiddenAt: p.hiddenAt,
  });
  const comment = (c: Comment): Item => ({
    kind: 'comment',
    id: c.id,
    text: (c.body ?? '').slice(0, 120),
    author: c.author.username,
    createdAt: c.createdAt,
    hiddenAt: c.hiddenAt,
  });
  return {
    posts: posts.map(post),
    comments: comments.map(comment),
    olderHidden: [...olderHiddenPosts.map(post), ...olderHiddenComments.map(comment)],
  };
}

function byIdForm(csrf: string): Html {
  return html`<section aria-labelledby="by-id-heading"><h2 id="by-id-heading">Another post or comment, by its id</h2>
      <form method="post" action="/admin/moderation">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="mod-kind">What</label>
        <select id="mod-kind" name="kind"><option value="post">Post</option><option value="comment">Comment</option></select>
        <label for="mod-id">Id</label>
        <input type="text" id="mod-id" name="id" required pattern="[0-9a-fA-F-]{36}">
        <label for="mod-action">Action</label>
        <select id="mod-action" name="action"><option value="hide">Hide</option><option value="unhide">Unhide</option></select>
        <p><button type="submit">Apply</button></p>
      </form></section>`;
}

export function moderationPages() {
  async function render(
    req: Request,
    res: Response,
    status = 200,
    errors: string[] = [],
    notice?: string,
  ): Promise<void> {
    const { user, csrf } = req.web!;
    if (!user!.isAdmin) {
      return void res
        .status(403)
        .type('html')
        .send(page('Moderation', user, csrf, html`<h1>Moderation</h1><p>Only administrators may moderate.</p>`));
    }
    const { posts, comments, olderHidden } = await items(req);
    res
      .status(status)
      .type('html')
      .send(
        page(
          'Moderation',
          user,
          csrf,
          html`
      <h1>Moderation</h1>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${errorList(errors)}
      <p>A hidden post or comment is left out of every list, search and read for everyone but its author. Unhide puts it back.</p>
      <section aria-labelledby="posts-heading"><h2 id="posts-heading">Recent posts</h2>
      ${itemTable(`The ${RECENT} newest, hidden ones marked`, 'Post', posts, csrf)}</section>
      <section aria-labelledby="comments-heading"><h2 id="comments-heading">Recent comments</h2>
      ${itemTable(`The ${RECENT} newest, hidden ones marked`, 'Comment', comments, csrf)}</section>
      ${
        olderHidden.length
          ? html`<section aria-labelledby="older-heading"><h2 id="older-heading">Hidden earlier</h2>
            ${itemTable('Older posts and comments that are hidden', 'Post or comment', olderHidden, csrf)}</section>`
          : ''
      }
      ${byIdForm(csrf)}`,
        ),
      );
  }

  async function act(req: Request, res: Response): Promise<void> {
    const body = req.body as Record<string, unknown>;
    const kind = body.kind === 'comment' ? 'comment' : 'post';
    const id = typeof body.id === 'string' ? body.id.trim() : '';
    const hide = body.action !== 'unhide';
    const actor: Actor = { userId: req.web!.user!.id, via: 'session', scopes: [] };
    try {
      if (kind === 'post') await setPostHidden(req.em, actor, id, hide);
      else await setCommentHidden(req.em, actor, id, hide);
      await render(req, res, 200, [], `The ${kind} ${id} is ${hide ? 'hidden' : 'visible again'}.`);
    } catch (err) {
      if (err instanceof ProblemError && (err.status === 404 || err.status === 403))
        return render(req, res, err.status, [err.detail]);
      throw err;
    }
  }

  return { show: (req: Request, res: Response) => render(req, res), act };
}
