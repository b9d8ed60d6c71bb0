/**
 * /docs/problems and /docs/problems/<slug>: what each problem type means and the codes that refine
 * it, from the contract's catalogues (x-problem-types, x-problem-codes), so that a problem's `type`
 * leads to its explanation (RFC 9457).
 * /problems/<slug> redirects there: a problem's `type` is that reference, so resolved against the
 * request's URL it opens here, on the server that sent it (docs/decisions/0016-problem-type-uris.md).
 */
import type { Request, Response } from 'express';
import { marked } from 'marked';
import type { OpenApiDocument } from '../kernel/contract.js';
import { PROBLEM_BASE } from '../kernel/problem.js';
import { html, page, raw, type Html } from './views.js';

type Entry = { slug: string; title: string; status: string; meaning: string };
type Code = { code: string; types: string[]; meaning: string };

/** The catalogue's own text (backticks for code) as HTML: the contract's words, not user input. */
const words = (text: string): Html => raw(marked.parseInline(text, { async: false }));

export function problemPages(doc: OpenApiDocument) {
  const catalogue = (doc as unknown as { 'x-problem-types': Entry[] })['x-problem-types'];
  const bySlug = new Map(catalogue.map((e) => [e.slug, e]));
  const codes = (doc as unknown as { 'x-problem-codes'?: Code[] })['x-problem-codes'] ?? [];
  const codesOf = (slug: string) => codes.filter((c) => c.types.includes(slug));

  function index(req: Request, res: Response): void {
    res.type('html').send(
      page(
        'Problem types',
        req.web!.user,
        req.web!.csrf,
        html`<h1>Problem types</h1>
      <p>Every error answer is an RFC 9457 problem document (<code>application/problem+json</code>). Its <code>type</code> says
      which kind of problem it is, and stays the same from one answer to the next; <code>detail</code> says what happened this
      time; <code>code</code> says why, in one word a program compares: the type's own name, or a code that refines it
      (each type's page lists its codes). The lists are open: a newer server may send a type or code not listed here, which a
      client handles by its <code>type</code>, then its <code>status</code>.</p>
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
      ${codeTable(entry.slug)}
      <p><a href="/docs/problems">Every problem type</a> · <a href="/docs">The API reference</a></p>`,
      ),
    );
  }

  /** The codes a problem of this type may carry: its own slug, and each that refines it. */
  function codeTable(slug: string): Html {
    const refining = codesOf(slug);
    return html`<table><caption class="hint">Its codes (<code>code</code>)</caption>
      <thead><tr><th scope="col">Code</th><th scope="col">When</th></tr></thead><tbody>
      <tr><td data-label="Code"><code>${slug}</code></td><td data-label="When">${
        refining.length ? 'None of the codes below applies.' : 'Always: this type has no more specific code.'
      }</td></tr>
      ${refining.map(
        (c) =>
          html`<tr><td data-label="Code"><code id="${c.code}">${c.code}</code></td><td data-label="When">${words(c.meaning)}</td></tr>`,
      )}</tbody></table>`;
  }

  /** A type URI's own path: on the server at its host, the URI resolves to its page. */
  function typeUri(req: Request, res: Response): void {
    res.redirect(301, `/docs/problems/${encodeURIComponent(String(req.params.slug))}`);
  }

  return { index, one, typeUri };
}
