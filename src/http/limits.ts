/** Limits the server enforces, in one place (published by GET /platform/limits). */
export const REQUEST_BODY_BYTES = 1024 * 1024;
export const TAGS_PER_ITEM = 10;
/**
 * The most pixels an uploaded image may have, all its frames together. Judged from the header
 * before any decoding; a decode costs CPU in proportion (a 25-megapixel PNG of zeros is 39 KB).
 */
export const IMAGE_PIXELS_MAX = 25_000_000;
