/**
 * A post's Markdown as HTML that is safe to show anyone: on the public pages and in feeds, where a
 * reader's software renders it. The rules are the sanitiser's, applied while rendering rather than
 * after it, so nothing unsafe is ever produced:
 * - raw HTML in the body (a `<script>`, an `onerror=`, an `<iframe>`) is shown as the text it is,
 *   escaped, never passed on;
 * - a link goes only to http(s) or mailto (no `javascript:`, `data:` or `vbscript:`), and is
 *   `rel="nofollow ugc noopener"`: its address is the author's, not Shipyard's;
 * - an image loads only over http(s), lazily, without a referrer;
 * - every text and attribute is escaped by the renderer.
 */
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from '../kernel/text.js';

/** Whether a link's address may be followed: absolute http(s) or mailto, nothing else. */
const linkable = (href: string) => /^(https?:\/\/|mailto:)/i.test(href.trim());
const loadable = (src: string) => /^https?:\/\//i.test(src.trim());

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link) {
      const text = this.parser.parseInline(tokens);
      if (!linkable(href)) return text;
      const titled = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(href.trim())}"${titled} rel="nofollow ugc noopener">${text}</a>`;
    },
    image({ href, title, text }: Tokens.Image) {
      if (!loadable(href)) return escapeHtml(text);
      const titled = title ? ` title="${escapeHtml(title)}"` : '';
      return `<img src="${escapeHtml(href.trim())}" alt="${escapeHtml(text)}"${titled} loading="lazy" referrerpolicy="no-referrer">`;
    },
  },
});

/** The body as safe HTML (see above). */
export function postHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}
