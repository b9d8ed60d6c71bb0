/** Limits the server enforces, in one place (published by GET /platform/limits). */
export const REQUEST_BODY_BYTES = 1024 * 1024;
export const TAGS_PER_ITEM = 10;
