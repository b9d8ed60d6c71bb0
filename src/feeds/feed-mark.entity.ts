import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * When a feed's first page last changed, as the server saw it: the digest of what the page held
 * then, and the second it was first served so. A page's newest entry cannot say when an entry left
 * it (deleted, hidden, its project made private) or when a name it shows changed, so its
 * Last-Modified is this mark, which only moves forward (./feeds.service.ts). Written by a feed
 * read that finds the page changed; shared by every instance.
 */
const FeedMarkSchema = defineEntity({
  name: 'FeedMark',
  tableName: 'feed_marks',
  properties: {
    /** The feed's path and the kinds asked for (none: all of them): `/feeds/projects/…|build_log`. */
    page: p.string().length(300).primary(),
    digest: p.string().length(64),
    modifiedAt: p.datetime(),
  },
});
export class FeedMark extends FeedMarkSchema.class {}
FeedMarkSchema.setClass(FeedMark);
