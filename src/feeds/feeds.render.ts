/**
 * A feed document written as Atom 1.0 or JSON Feed 1.1, by feedsmith (docs/decisions/0018-feeds.md).
 * Titles and summaries are plain text, and said so (`type="text"`): a title `<script>` is shown
 * as those characters, never run. The content is HTML that was made safe before it got here
 * (src/posts/post-html.ts). Atom's paging links follow RFC 5005 (`first`, `next`).
 */
import { generateAtomFeed, generateJsonFeed } from 'feedsmith';
import type { FeedDocument } from './feeds.service.js';

/**
 * Characters XML 1.0 cannot carry (C0 controls other than tab and line breaks, lone surrogates,
 * U+FFFE and U+FFFF): a post's body may hold them, and one would make the whole document
 * unreadable to every reader of the feed. Left out of what Atom carries.
 */
const CONTROLS = '\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\uFFFE\\uFFFF';
const NOT_XML = new RegExp(
  `[${CONTROLS}]|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]`,
  'g',
);
const xml = (text: string) => text.replace(NOT_XML, '');

export function atomFeed(feed: FeedDocument): string {
  return generateAtomFeed(
    xmlSafe({
      id: feed.id,
      title: { value: feed.title, type: 'text' },
      subtitle: { value: feed.description, type: 'text' },
      updated: feed.updated,
      links: [
        { href: feed.self, rel: 'self', type: 'application/atom+xml' },
        { href: feed.home, rel: 'alternate', type: 'text/html' },
        { href: feed.alternate, rel: 'alternate', type: 'application/feed+json' },
        { href: feed.first, rel: 'first', type: 'application/atom+xml' },
        ...(feed.next ? [{ href: feed.next, rel: 'next', type: 'application/atom+xml' }] : []),
      ],
      ...(feed.author ? { authors: [{ name: feed.author.name, uri: feed.author.url }] } : {}),
      generator: { text: 'Shipyard' },
      entries: feed.entries.map((e) => ({
        id: e.id,
        title: { value: e.title, type: 'text' },
        updated: e.updated,
        published: e.published,
        links: [{ href: e.url, rel: 'alternate', type: 'text/html' }],
        authors: [{ name: e.author.name, uri: e.author.url }],
        categories: e.tags.map((term) => ({ term })),
        summary: { value: e.summary, type: 'text' },
        content: { value: e.html, type: 'html' },
        ...(e.images.length ? { media: { contents: e.images.map((url) => ({ url, medium: 'image' })) } } : {}),
      })),
    }),
  );
}

/** Every string in `value`, with the characters XML cannot carry left out. */
function xmlSafe<T>(value: T): T {
  if (typeof value === 'string') return xml(value) as T;
  if (Array.isArray(value)) return value.map(xmlSafe) as T;
  if (value && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, xmlSafe(v)])) as T;
  return value;
}

export function jsonFeed(feed: FeedDocument): string {
  const generated = generateJsonFeed({
    title: feed.title,
    home_page_url: feed.home,
    // The feed's own address identifies the feed, whichever page this is.
    feed_url: feed.first,
    description: feed.description,
    ...(feed.next ? { next_url: feed.next } : {}),
    ...(feed.author ? { authors: [{ name: feed.author.name, url: feed.author.url }] } : {}),
    items: feed.entries.map((e) => ({
      id: e.id,
      url: e.url,
      title: e.title,
      content_html: e.html,
      summary: e.summary,
      ...(e.images[0] ? { image: e.images[0] } : {}),
      date_published: e.published,
      date_modified: e.updated,
      tags: e.tags,
      authors: [{ name: e.author.name, url: e.author.url }],
    })),
  }) as Record<string, unknown>;
  // feedsmith leaves an empty list out; JSON Feed requires `items`, empty or not.
  return JSON.stringify({ ...generated, items: generated.items ?? [] });
}
