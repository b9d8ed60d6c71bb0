/**
 * Feeds of a public project, a person or a tag, for anybody without a key. A request is answered
 * in two steps: the page's stamp (its newest change and a digest of what it holds) gives the
 * validators, so a conditional request that still holds the page is a 304 before any entry is
 * read; only otherwise is the page read whole and turned into a feed document (./feeds.render.ts
 * writes it as Atom or JSON Feed). A private or deleted project, or an unknown person, is a 404
 * that names nothing, as the API's own is.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../kernel/problem.js';
import { isUuid } from '../kernel/ids.js';
import { namesEtag } from '../kernel/etag.js';
import { cursorList, decodeCursor, encodeCursor } from '../kernel/cursor.js';
import { API_BASE } from '../kernel/contract.js';
import { isoString } from '../db/reads.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import {
  type FeedKind,
  type FeedPageQuery,
  type FeedPosition,
  type FeedSource,
  feedHeadOfProject,
  feedHeadOfUser,
  feedPage,
  feedMarkOf,
  feedStamp,
  moveFeedMark,
  POST_FEED_KINDS,
  PROJECT_FEED_KINDS,
} from './feeds.queries.js';
import { type FeedEntry, entryOf, nameUuid } from './feed-entries.js';
import { publicPaths } from '../kernel/public-paths.js';

export type FeedFormat = 'atom' | 'json';

/** What a feed answers: the document, or that the copy the reader holds is still it. */
export type FeedAnswer = { validators: Validators } & ({ fresh: true } | { fresh: false; feed: FeedDocument });

/** The page's validators, as HTTP carries them: a strong ETag, and the newest change (when known). */
type Validators = { etag: string; lastModified: Date | null };

/** A feed as both formats write it. */
export type FeedDocument = {
  id: string;
  title: string;
  description: string;
  /** The public page the feed belongs to. */
  home: string;
  /** This page, the first page and the next one, in this format. */
  self: string;
  first: string;
  next: string | null;
  /** The other format's address of the same feed. */
  alternate: string;
  updated: Date;
  author: { name: string; url: string } | null;
  entries: FeedEntry[];
};

/** What the reader asked for: the entries' kinds, the page, and the copy it holds. */
export type FeedRequest = {
  format: FeedFormat;
  kinds?: readonly FeedKind[] | undefined;
  limit: number;
  cursor?: string | undefined;
  ifNoneMatch?: string | undefined;
  ifModifiedSince?: string | undefined;
};

/** Where the feeds live (PUBLIC_URL), and where a mark that could not be read or written is told. */
export type FeedSite = { url: string; markFailed: (error: unknown) => void };

/** Whose feed: where its entries come from, what it is called, where it lives. */
type Head = {
  source: FeedSource;
  /** The feed's path under the API, without the format's extension. */
  path: string;
  id: string;
  title: string;
  description: string;
  home: string;
  author: { name: string; url: string } | null;
  /** When the feed's own title or description last changed, if it has one. */
  changedAt: Date | null;
  kinds: readonly FeedKind[];
};

/** How PostgreSQL prints a timestamp with its zone (`2026-11-29 10:00:00.123456+00`): a position's time. */
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

/** A position in one of `kinds`' feeds, as a cursor carries it: those three fields, nothing else. */
const isPositionIn =
  (kinds: readonly FeedKind[]) =>
  (v: unknown): v is FeedPosition => {
    if (typeof v !== 'object' || v === null) return false;
    const { at, key, kind, ...rest } = v as Record<string, unknown>;
    return (
      Object.keys(rest).every((k) => k === 'l') &&
      typeof at === 'string' &&
      PG_TIMESTAMP.test(at) &&
      typeof key === 'string' &&
      isUuid(key) &&
      typeof kind === 'string' &&
      (kinds as readonly string[]).includes(kind)
    );
  };

export async function projectFeed(em: EntityManager, site: FeedSite, projectId: string, req: FeedRequest) {
  const head = await feedHeadOfProject(em, projectId);
  if (!head) throw notFound(`No project with id ${projectId}.`);
  const paths = publicPaths(site.url);
  return answer(em, site, req, {
    source: { projectId },
    path: `/feeds/projects/${projectId}`,
    id: `urn:uuid:${projectId}`,
    title: head.name,
    description: head.tagline || `The build log and roadmap of ${head.name}.`,
    home: paths.project(projectId),
    author: { name: head.displayName, url: paths.user(head.username) },
    changedAt: new Date(isoString(head.updatedAt)),
    kinds: PROJECT_FEED_KINDS,
  });
}

export async function userFeed(em: EntityManager, site: FeedSite, username: string, req: FeedRequest) {
  // Usernames are lowercase (the contract's pattern refuses any other), as the page's path is.
  const head = await feedHeadOfUser(em, username);
  if (!head) throw notFound(`No user named ${username}.`);
  const paths = publicPaths(site.url);
  return answer(em, site, req, {
    source: { authorId: head.id },
    path: `/feeds/users/${encodeURIComponent(head.username)}`,
    id: `urn:uuid:${head.id}`,
    title: head.displayName,
    description: `Posts and build logs by ${head.displayName} (@${head.username}).`,
    home: paths.user(head.username),
    author: { name: head.displayName, url: paths.user(head.username) },
    changedAt: null,
    kinds: POST_FEED_KINDS,
  });
}

export async function tagFeed(em: EntityManager, site: FeedSite, tag: string, req: FeedRequest) {
  const lower = tag.toLowerCase();
  return answer(em, site, req, {
    source: { tag: lower },
    path: `/feeds/tags/${encodeURIComponent(lower)}`,
    id: `urn:uuid:${nameUuid(`tag:${lower}`)}`,
    title: `#${lower}`,
    description: `Posts and build logs tagged ${lower}.`,
    home: publicPaths(site.url).home(),
    author: null,
    changedAt: null,
    kinds: POST_FEED_KINDS,
  });
}

/** The answer to `req` for the feed `head`: fresh when the reader's copy is still the page, else the page. */
async function answer(em: EntityManager, site: FeedSite, req: FeedRequest, head: Head): Promise<FeedAnswer> {
  const kinds = req.kinds?.length ? head.kinds.filter((k) => req.kinds!.includes(k)) : head.kinds;
  const list = cursorList('feed', head.path, [...kinds].sort());
  const after = decodeCursor(req.cursor, isPositionIn(kinds), list);
  // One entry more than the page shows, to know whether a next page follows.
  const query: FeedPageQuery = { source: head.source, kinds, after: after ?? undefined, limit: req.limit + 1 };
  // The stamp first: a change between it and the page's read makes the next poll a 200 (its tag
  // is older than the page it came with), never a 304 for a page that missed the change.
  const stamp = await feedStamp(em, query);
  const content = contentOf(req, head, kinds, stamp);
  const etag = etagOf(req, content);
  // If-None-Match decides alone when sent (RFC 9110, 13.2.2): a tag it names is a 304 that reads
  // nothing more, and that needs no Last-Modified (the reader's copy has the one it came with).
  if (req.ifNoneMatch !== undefined && namesEtag(req.ifNoneMatch, etag))
    return { validators: { etag, lastModified: null }, fresh: true };
  const newest = newestOf(stamp, head);
  const validators = {
    etag,
    lastModified: req.cursor ? null : await firstPageMark(em, site, req, head, kinds, content, newest),
  };
  if (req.ifNoneMatch === undefined && notModifiedSince(req, validators.lastModified))
    return { validators, fresh: true };

  const rows = await feedPage(em, query);
  const shown = rows.slice(0, req.limit);
  const last = shown.at(-1);
  const address = (format: FeedFormat, cursor?: string) => {
    const params = new URLSearchParams();
    if (req.kinds?.length) params.set('kinds', kinds.join(','));
    if (req.limit !== FEED_PAGE) params.set('limit', String(req.limit));
    if (cursor) params.set('cursor', cursor);
    const search = params.size ? `?${params}` : '';
    return `${site.url}${API_BASE}${head.path}.${format}${search}`;
  };
  const nextCursor =
    rows.length > req.limit && last ? encodeCursor({ at: last.position, key: last.key, kind: last.kind }, list) : null;
  const paths = publicPaths(site.url);
  const entries = shown.map((row) => entryOf(row, paths));
  return {
    validators,
    fresh: false,
    feed: {
      id: head.id,
      title: head.title,
      description: head.description,
      home: head.home,
      self: address(req.format, req.cursor),
      first: address(req.format),
      next: nextCursor ? address(req.format, nextCursor) : null,
      alternate: address(req.format === 'atom' ? 'json' : 'atom', req.cursor),
      updated: validators.lastModified ?? newest ?? new Date(0),
      author: head.author,
      entries,
    },
  };
}

/** The page size a feed reader gets when it does not ask for one (the contract's default for `limit`). */
export const FEED_PAGE = 20;

/**
 * A digest of what a page shows, whatever its format: the stamp's digest of its entries, the
 * feed's own title and description, and the kinds and length asked for.
 */
function contentOf(
  req: FeedRequest,
  head: Head,
  kinds: readonly FeedKind[],
  stamp: { newest: string | null; digest: string },
): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        head.path,
        head.title,
        head.description,
        head.author,
        head.changedAt,
        stamp.digest,
        req.limit,
        // The kinds as the page's links name them: in the feed's order, or none when none were asked for.
        req.kinds?.length ? kinds : null,
      ]),
    )
    .digest('base64url')
    .slice(0, 32);
}

/** A strong ETag of this page in this format: what it shows, and where it starts. */
const etagOf = (req: FeedRequest, content: string) =>
  `"${createHash('sha256')
    .update(JSON.stringify([req.format, content, req.cursor ?? null]))
    .digest('base64url')
    .slice(0, 32)}"`;

/** The newest change among a page's entries and its feed's own title, when there is one. */
function newestOf(stamp: { newest: string | null }, head: Head): Date | null {
  const times = [stamp.newest ? new Date(stamp.newest) : null, head.changedAt].filter((t): t is Date => t !== null);
  return times.length ? new Date(Math.max(...times.map((t) => t.getTime()))) : null;
}

/**
 * A first page's Last-Modified: when it was first served as it is now (its mark), which moves
 * forward whenever what it shows changes, an entry that left it (deleted, hidden, its project
 * made private) or a name it shows included: its newest entry's time would stand still then, or go
 * back, and a reader revalidating by date would keep what left. A feed with nothing to date (no
 * entry, no project behind it) has none until it has. Later pages carry their ETag only: a
 * cursor's page is not marked, so that cursors cannot fill the table.
 */
async function firstPageMark(
  em: EntityManager,
  site: FeedSite,
  req: FeedRequest,
  head: Head,
  kinds: readonly FeedKind[],
  content: string,
  newest: Date | null,
): Promise<Date | null> {
  // Pages of the default length only (a feed's address as the pages and answers hand it out):
  // a feed then has a mark per choice of kinds, not one per length a reader may ask for.
  if (req.limit !== FEED_PAGE) return null;
  const page = `${head.path}|${req.kinds?.length ? kinds.join(',') : ''}`;
  let mark: Date;
  try {
    const row = await feedMarkOf(em, page);
    if (row?.digest === content) mark = new Date(row.modifiedAt);
    else if (!row && !newest) return null;
    else mark = await moveFeedMark(em, page, content);
  } catch (error) {
    // The date is an extra: without it the page still goes out, validated by its ETag.
    if (isDatabaseUnavailable(error)) throw error;
    site.markFailed(error);
    return null;
  }
  // Moved on more than once within a second, a mark runs ahead of the clock: no date later than
  // the answer's own is sent (RFC 9110, 8.8.2.1); the ETag validates meanwhile.
  return mark.getTime() > Date.now() ? null : mark;
}

/** Whether the reader's copy, dated If-Modified-Since, is still the page: to the second HTTP dates carry. */
function notModifiedSince(req: FeedRequest, lastModified: Date | null): boolean {
  if (req.ifModifiedSince === undefined || !lastModified) return false;
  const since = Date.parse(req.ifModifiedSince);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
}
