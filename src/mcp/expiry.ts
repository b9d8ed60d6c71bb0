/**
 * A key about to expire says so in every tool result, so that the agent can tell its person before
 * the calls start failing: one short line in the text, and the same in `_meta` for hosts that read
 * it, once fewer than seven whole days are left (a key made for seven days is not flagged at once).
 */
import { calendarDaysUntil, inDays } from '../kernel/days.js';

const WARN_DAYS = 7;
/** The `_meta` key (MCP: a prefix of our own, then a name). */
export const EXPIRY_META_KEY = 'shipyard.dev/key-expiration';

export type ExpiryNotice = {
  line: string;
  meta: { expiresAt: string; daysLeft: number; renewAt: string };
};

export function expiryNotice(
  expiresAt: Date | undefined,
  keysPage: string,
  now = Date.now(),
): ExpiryNotice | undefined {
  if (!expiresAt) return undefined;
  // By the calendar, as the keys page says it: a key that ends late tomorrow ends "tomorrow".
  const daysLeft = Math.max(0, calendarDaysUntil(expiresAt, now));
  if (daysLeft >= WARN_DAYS) return undefined;
  const when = inDays(daysLeft);
  return {
    line: `Note for the user: this API key expires ${when} (${expiresAt.toISOString()}); make a new one at ${keysPage}.`,
    meta: { expiresAt: expiresAt.toISOString(), daysLeft, renewAt: keysPage },
  };
}
