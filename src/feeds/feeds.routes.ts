import type { Request } from 'express';
import type { SomeHandlers } from '../http/kit/handler.js';
import {
  type FeedAnswer,
  type FeedFormat,
  type FeedRequest,
  type FeedSite,
  projectFeed,
  tagFeed,
  userFeed,
} from './feeds.service.js';
import { everyThirtySeconds, type Logger } from '../kernel/logger.js';
import type { FeedKind } from './feeds.queries.js';
import { atomFeed, jsonFeed } from './feeds.render.js';
import { FEED_PAGE } from './feeds.service.js';

/** Feeds are public and the same for everyone: any cache may keep one a minute, then ask again. */
const CACHE_CONTROL = 'public, max-age=60';
const MEDIA_TYPES: Record<FeedFormat, string> = {
  atom: 'application/atom+xml; charset=utf-8',
  json: 'application/feed+json; charset=utf-8',
};

type FeedQuery = { kinds?: FeedKind[]; limit?: number; cursor?: string } | undefined;

const requestOf = (format: FeedFormat, query: FeedQuery, req: Request): FeedRequest => ({
  format,
  kinds: query?.kinds,
  limit: query?.limit ?? FEED_PAGE,
  cursor: query?.cursor,
  ifNoneMatch: req.header('if-none-match'),
  ifModifiedSince: req.header('if-modified-since'),
});

/** The answer as HTTP: a 304 with the validators, or the feed in its format with them. */
function reply(format: FeedFormat, answer: FeedAnswer) {
  const { etag, lastModified } = answer.validators;
  const headers: Record<string, string> = {
    ETag: etag,
    'Cache-Control': CACHE_CONTROL,
    ...(lastModified ? { 'Last-Modified': lastModified.toUTCString() } : {}),
  };
  if (answer.fresh) return { status: 304 as const, headers };
  const text = format === 'atom' ? atomFeed(answer.feed) : jsonFeed(answer.feed);
  return { status: 200 as const, text, contentType: MEDIA_TYPES[format], headers };
}

export function feedsHandlers(url: string, log: Logger) {
  const site: FeedSite = {
    url,
    markFailed: everyThirtySeconds(
      log,
      "a feed's Last-Modified mark could not be read or written: it went out without one",
    ),
  };
  return {
    getProjectAtomFeed: async ({ em, path, query, req }) =>
      reply('atom', await projectFeed(em, site, path.projectId, requestOf('atom', query, req))),
    getProjectJsonFeed: async ({ em, path, query, req }) =>
      reply('json', await projectFeed(em, site, path.projectId, requestOf('json', query, req))),
    getUserAtomFeed: async ({ em, path, query, req }) =>
      reply('atom', await userFeed(em, site, path.username, requestOf('atom', query, req))),
    getUserJsonFeed: async ({ em, path, query, req }) =>
      reply('json', await userFeed(em, site, path.username, requestOf('json', query, req))),
    getTagAtomFeed: async ({ em, path, query, req }) =>
      reply('atom', await tagFeed(em, site, path.tag, requestOf('atom', query, req))),
    getTagJsonFeed: async ({ em, path, query, req }) =>
      reply('json', await tagFeed(em, site, path.tag, requestOf('json', query, req))),
  } satisfies SomeHandlers<
    | 'getProjectAtomFeed'
    | 'getProjectJsonFeed'
    | 'getUserAtomFeed'
    | 'getUserJsonFeed'
    | 'getTagAtomFeed'
    | 'getTagJsonFeed'
  >;
}
