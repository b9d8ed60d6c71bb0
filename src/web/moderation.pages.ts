/**
 * The administrators' moderation page: hide or unhide a post or comment by id, and the list of
 * what is hidden now. The same service as the session-only API operations (moderation.service.ts).
 */
import type { Request, Response } from 'express';
import { Post } from '../posts/post.entity.js';
import { Comment } from '../comments/comment.entity.js';
import { setCommentHidden, setPostHidden } from '../moderation/moderation.service.js';
import { ProblemError } from '../http/problem.js';
import type { Actor } from '../http/actor.js';
import { errorList, html, page, type Html } from './views.js';

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
    const posts = await req.em.find(
      Post,
      { hiddenAt: { $ne: null } },
      { orderBy: { hiddenAt: 'desc' }, limit: 50, populate: ['author'] },
    );
    const comments = await req.em.find(
      Comment,
      { hiddenAt: { $ne: null } },
      { orderBy: { hiddenAt: 'desc' }, limit: 50, populate: ['author'] },
    );
    const unhide = (kind: 'post' | 'comment', id: string): Html => html`<form method="post" action="/admin/moderation">
      <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="kind" value="${kind}">
      <input type="hidden" name="id" value="${id}"><input type="hidden" name="action" value="unhide">
      <button type="submit">Unhide<span class="visually-hidden"> ${kind} ${id}</span></button></form>`;
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
      <form method="post" action="/admin/moderation">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="mod-kind">What</label>
        <select id="mod-kind" name="kind"><option value="post">Post</option><option value="comment">Comment</option></select>
        <label for="mod-id">Id</label>
        <input type="text" id="mod-id" name="id" required pattern="[0-9a-fA-F-]{36}">
        <label for="mod-action">Action</label>
        <select id="mod-action" name="action"><option value="hide">Hide</option><option value="unhide">Unhide</option></select>
        <p><button type="submit">Apply</button></p>
      </form>
      <h2>Hidden posts</h2>
      ${
        posts.length
          ? html`<table><thead><tr><th scope="col">Post</th><th scope="col">Author</th><th scope="col">Action</th></tr></thead><tbody>
        ${posts.map((p) => html`<tr><td data-label="Post">${p.title} <code>${p.id}</code></td><td data-label="Author">${p.author.username}</td><td data-label="Action">${unhide('post', p.id)}</td></tr>`)}
        </tbody></table>`
          : html`<p>None.</p>`
      }
      <h2>Hidden comments</h2>
      ${
        comments.length
          ? html`<table><thead><tr><th scope="col">Comment</th><th scope="col">Author</th><th scope="col">Action</th></tr></thead><tbody>
        ${comments.map((c) => html`<tr><td data-label="Comment">${(c.body ?? '').slice(0, 120)} <code>${c.id}</code></td><td data-label="Author">${c.author.username}</td><td data-label="Action">${unhide('comment', c.id)}</td></tr>`)}
        </tbody></table>`
          : html`<p>None.</p>`
      }`,
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
