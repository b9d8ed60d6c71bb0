/**
 * The repository's Markdown (docs/api.md, docs/api-changes.md) as served pages: each heading with
 * an id (`headingId`, or the page's own), and links to the repository's other files as plain text,
 * since those are not served. The files are the repository's own, never user input.
 */
import { Marked, type RendererObject, type Tokens } from 'marked';
import { headingId } from '../kernel/heading-id.js';
import { raw, type Html } from './views.js';

export function markdownHtml(
  markdown: string,
  opts: { id?: (heading: Tokens.Heading) => string; renderer?: RendererObject } = {},
): Html {
  const md = new Marked({
    renderer: {
      heading(heading: Tokens.Heading) {
        const id = opts.id?.(heading) ?? headingId(heading.text);
        return `<h${heading.depth} id="${id}">${this.parser.parseInline(heading.tokens)}</h${heading.depth}>\n`;
      },
      link({ href, tokens }: Tokens.Link) {
        return /^(https?:|#)/.test(href) ? false : this.parser.parseInline(tokens);
      },
      ...opts.renderer,
    },
  });
  // A code block scrolls sideways when its lines are long: reachable by keyboard (tabindex), as
  // axe-core's scrollable-region-focusable asks. Code is escaped, so "<pre>" is only the element.
  return raw(md.parse(markdown, { async: false }).replaceAll('<pre>', '<pre tabindex="0">'));
}
