/**
 * /docs/problems and /docs/problems/<slug>: what each problem type means, from the contract's
 * catalogue (x-problem-types), so that a problem's `type` leads to its explanation (RFC 9457).
 * /problems/<slug> redirects there: a problem's `type` is that reference, so resolved against the
 * request's URL it opens here, on the server that sent it (docs/decisions/0016-problem-type-uris.md).
 */
import type { Request, Response } from 'express';
import { marked } from 'marked';
import type { OpenApiDocument } from '../kernel/contract.js';
import { PROBLEM_BASE } from '../kernel/problem.js';
import { html, page, raw, type Html } from './views.js';

type Entry = { slug: string; title: string; status: string; meaning: string };

/** The catalogue's own text (backticks for code) as HTML: the contract's words, not user input. */
const words = (text: string): Html => raw(marked.parseInline(text, { async: false }));

export function problemPages(doc: OpenApiDocument) {
  const catalogue = (doc as unknown as { 'x-problem-types': Entry[] })['x-problem-types'];
  const bySlug = new Map(catalogue.map((e) => [e.slug, e]));

  function index(req: Request, res: Response): void {
    res.type('html').send(
      page(
        'Problem types',
        req.web!.user,
        req.web!.csrf,
        html`<h1>Problem types</h1>
      <p>Every error answer is an RFC 9457 problem document (<code>application/problem+json</code>). Its <code>type</code> says
      which kind of problem it is, and stays the same from one answer to the next; <code>detail</code> says what happened this
      time. The list is open: a newer server may send a type not listed here, which a client handles by its <code>status</code>.</p>
      <table><caption class="hint">The ${catalogue.length} problem types, by status</caption>
      <thead><tr><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Title</th></tr></thead><tbody>
      ${catalogue.map(
        (e) => html`<tr><td data-label="Type"><a href="/docs/problems/${e.slug}"><code>${e.slug}</code></a></td>
        <td data-label="Status">${e.status}</td><td data-label="Title">${e.title}</td></tr>`,
      )}</tbody></table>`,
      ),
    );
  }

  function one(req: Request, res: Response): void {
    const entry = bySlug.get(String(req.params.slug));
    const { user, csrf } = req.web!;
    if (!entry) {
      res
        .status(404)
        .type('html')
        .send(
          page(
            'No such problem type',
            user,
            csrf,
            html`<h1>No such problem type</h1><p>See <a href="/docs/problems">every problem type</a>.</p>`,
          ),
        );
      return;
    }
    res.type('html').send(
      page(
        entry.title,
        user,
        csrf,
        html`<h1>${entry.title}</h1>
      <dl class="facts"><dt>Type</dt><dd><code>${PROBLEM_BASE}${entry.slug}</code></dd><dt>Status</dt><dd>${entry.status}</dd></dl>
      <p>${words(entry.meaning)}</p>
      <p><a href="/docs/problems">Every problem type</a> · <a href="/docs">The API reference</a></p>`,
      ),
    );
  }

  /** A type URI's own path: on the server at its host, the URI resolves to its page. */
  function typeUri(req: Request, res: Response): void {
    res.redirect(301, `/docs/problems/${encodeURIComponent(String(req.params.slug))}`);
  }

  return { index, one, typeUri };
}
