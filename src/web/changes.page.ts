/**
 * /docs/changes: the API's changelog (docs/api-changes.md) as a page, so that what a response
 * points to is on the server that sent it. Every heading has an id of its own (a version's
 * sections carry the version's, `1-2-0-2026-11-26-added`), and each deprecation entry
 * (`deprecate <pattern>`) carries an anchor per operation it names, `#deprecate-<operationId>`:
 * the `Link` a deprecated operation sends (src/http/deprecation.ts) lands on its own entry.
 * (src/web/markdown.ts renders it.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import type { Tokens } from 'marked';
import { eachOperation, type OpenApiDocument } from '../kernel/contract.js';
import { operationPointer, pointerPattern } from '../kernel/pointer-pattern.js';
import { headingId } from '../kernel/heading-id.js';
import { markdownHtml } from './markdown.js';
import { page, type Html } from './views.js';

const CHANGELOG = fileURLToPath(new URL('../../docs/api-changes.md', import.meta.url));

/** The operations a deprecation pattern names, by operationId. */
function operationsMatching(pattern: string, doc: OpenApiDocument): string[] {
  const re = pointerPattern(pattern);
  const ids: string[] = [];
  for (const { path, method, op } of eachOperation(doc))
    if (op.operationId && re.test(operationPointer(path, method))) ids.push(op.operationId);
  return ids;
}

/** The changelog's markdown as the page's HTML. */
export function changesHtml(markdown: string, doc: OpenApiDocument): Html {
  // A version's sections (Added, Breaking, …) repeat in every version: their ids carry the version's.
  let version = '';
  return markdownHtml(markdown, {
    id: ({ depth, text }) => {
      if (depth <= 2) version = headingId(text);
      return depth > 2 && version ? `${version}-${headingId(text)}` : headingId(text);
    },
    renderer: {
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
}

export function changesPage(doc: OpenApiDocument) {
  const body = changesHtml(readFileSync(CHANGELOG, 'utf8'), doc);
  return (req: Request, res: Response): void => {
    res.type('html').send(page('API changes', req.web!.user, req.web!.csrf, body, { doc: true }));
  };
}
