/**
 * Whether an If-None-Match header names this ETag (RFC 9110, 13.1.2): any of its tags, a weak one
 * compared weakly, or `*`.
 */
export const namesEtag = (header: string | undefined, etag: string): boolean =>
  header
    ?.split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*') ?? false;
