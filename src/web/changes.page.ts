/**
 * /docs/changes: the API's changelog (docs/api-changes.md) as a page, so that what a response
 * points to is on the server that sent it. Every heading has an id of its own (a version's
 * sections carry the version's, `1-2-0-2026-11-26-added`), and each deprecation entry
 * (`deprecate <pattern>`) carries an anchor per operation it names, `#deprecate-<operationId>`:
 * the `Link` a deprecated operation sends (src/http/deprecation.ts) lands on its own entry.
 * Links to the repository's other files become plain text: they are not served.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { Marked, type Tokens } from 'marked';
import { HTTP_METHODS, type OpenApiDocument } from '../kernel/contract.js';
import { operationPointer, pointerPattern } from '../kernel/pointer-pattern.js';
import { page, raw, type Html } from './views.js';

const CHANGELOG = fileURLToPath(new URL('../../docs/api-changes.md', import.meta.url));

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** The operations a deprecation pattern names, by operationId. */
function operationsMatching(pattern: string, doc: OpenApiDocument): string[] {
  const re = pointerPattern(pattern);
  const ids: string[] = [];
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of HTTP_METHODS) {
      const id = item[method]?.operationId;
      if (id && re.test(operationPointer(path, method))) ids.push(id);
    }
  return ids;
}

/** The changelog's markdown as the page's HTML (the file is the repository's own, not user input). */
export function changesHtml(markdown: string, doc: OpenApiDocument): Html {
  // A version's sections (Added, Breaking, …) repeat in every version: their ids carry the version's.
  let version = '';
  const md = new Marked({
    renderer: {
      heading({ tokens, depth, text }: Tokens.Heading) {
        if (depth <= 2) version = slug(text);
        const id = depth > 2 && version ? `${version}-${slug(text)}` : slug(text);
        return `<h${depth} id="${id}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link({ href, tokens }: Tokens.Link) {
        return /^(https?:|#)/.test(href) ? false : this.parser.parseInline(tokens);
      },
      listitem(item: Tokens.ListItem) {
        const entry = /^`deprecate ([^`]+)`/.exec(item.text);
        if (!entry) return false;
        const anchors = operationsMatching(entry[1]!, doc)
          .map((id) => `<span id="deprecate-${id}"></span>`)
          .join('');
        return `<li>${anchors}${this.parser.parse(item.tokens)}</li>\n`;
      },
    },
  });
  return raw(md.parse(markdown, { async: false }));
}

export function changesPage(doc: OpenApiDocument) {
  const body = changesHtml(readFileSync(CHANGELOG, 'utf8'), doc);
  return (req: Request, res: Response): void => {
    res.type('html').send(page('API changes', req.web!.user, req.web!.csrf, body, { wide: true }));
  };
}
