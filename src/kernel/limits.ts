/** Limits the server enforces, in one place (published by GET /platform/limits). */
export const REQUEST_BODY_BYTES = 1024 * 1024;
export const TAGS_PER_ITEM = 10;
/**
 * The most pixels an uploaded image may have, all its frames together. Judged from the header
 * before any decoding; a decode costs CPU in proportion (a 25-megapixel PNG of zeros is 39 KB).
 */
export const IMAGE_PIXELS_MAX = 25_000_000;

/** The request budgets an instance is configured with (src/config.ts). */
export type RateLimits = {
  requestsPerMinutePerKey: number;
  requestsPerMinutePerUser: number;
  failedAuthPerMinutePerAddress: number;
  signInAttemptsPerAddress?: number;
  /** The length of a request budget's window (one minute; tests shorten it to see a budget refill). */
  windowMs?: number;
};

/** The longest any API key may last, in days; an operator may lower it (KEY_MAX_DAYS). */
export const MAX_KEY_DAYS = 366;
