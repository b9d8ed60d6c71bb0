/**
 * The rules of JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/) as a check that lists every
 * breach: the top-level fields and their types, each item's id and content, the URLs absolute,
 * the dates RFC 3339, authors as objects. An empty list is a valid feed.
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const isUrl = (v: unknown) => typeof v === 'string' && URL.canParse(v) && /^https?:/.test(v);

export function jsonFeedProblems(feed: unknown): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  if (typeof feed !== 'object' || feed === null) return ['the feed is not an object'];
  const f = feed as Record<string, unknown>;
  need(f.version === 'https://jsonfeed.org/version/1.1', 'version is https://jsonfeed.org/version/1.1');
  need(typeof f.title === 'string' && f.title.length > 0, 'title is a string');
  for (const key of ['home_page_url', 'feed_url', 'next_url', 'icon', 'favicon'])
    if (key in f) need(isUrl(f[key]), `${key} is an absolute URL`);
  if ('description' in f) need(typeof f.description === 'string', 'description is a string');
  if ('author' in f) problems.push('author is 1.0; 1.1 has authors');
  const authors = (where: string, value: unknown) => {
    need(Array.isArray(value), `${where}.authors is an array`);
    for (const a of Array.isArray(value) ? value : []) {
      need(typeof a === 'object' && a !== null, `${where}.authors[] is an object`);
      const o = a as Record<string, unknown>;
      need(
        ['name', 'url', 'avatar'].some((k) => k in o),
        `${where}.authors[] has a name, url or avatar`,
      );
      if ('url' in o) need(isUrl(o.url), `${where}.authors[].url is an absolute URL`);
    }
  };
  if ('authors' in f) authors('feed', f.authors);
  need(Array.isArray(f.items), 'items is an array');
  const ids = new Set<string>();
  for (const [i, item] of (Array.isArray(f.items) ? f.items : []).entries()) {
    const it = item as Record<string, unknown>;
    const at = `items[${i}]`;
    need(typeof it.id === 'string' && it.id.length > 0, `${at}.id is a non-empty string`);
    need(!ids.has(String(it.id)), `${at}.id is unique`);
    ids.add(String(it.id));
    need(
      typeof it.content_html === 'string' || typeof it.content_text === 'string',
      `${at} has content_html or content_text`,
    );
    for (const key of ['url', 'external_url', 'image', 'banner_image'])
      if (key in it) need(isUrl(it[key]), `${at}.${key} is an absolute URL`);
    for (const key of ['date_published', 'date_modified'])
      if (key in it) need(typeof it[key] === 'string' && RFC3339.test(it[key] as string), `${at}.${key} is RFC 3339`);
    for (const key of ['title', 'summary', 'language'])
      if (key in it) need(typeof it[key] === 'string', `${at}.${key} is a string`);
    if ('tags' in it)
      need(Array.isArray(it.tags) && it.tags.every((t) => typeof t === 'string'), `${at}.tags are strings`);
    if ('authors' in it) authors(at, it.authors);
    if ('author' in it) problems.push(`${at}.author is 1.0; 1.1 has authors`);
  }
  return problems;
}
