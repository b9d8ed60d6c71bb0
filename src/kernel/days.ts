const DAY_MS = 86_400_000;

/**
 * Days from today to the day `at` falls on, by the calendar (UTC, as dates are shown): a key
 * chosen to last until the end of tomorrow expires "tomorrow", though more than a day is left.
 */
export const calendarDaysUntil = (at: Date, now: Date | number = Date.now()): number =>
  Math.floor(at.getTime() / DAY_MS) - Math.floor(new Date(now).getTime() / DAY_MS);

/** "today", "tomorrow" or "in N days", for a count from `calendarDaysUntil`. */
export const inDays = (days: number): string => (days <= 0 ? 'today' : days === 1 ? 'tomorrow' : `in ${days} days`);

/** The UTC day a time falls on, as YYYY-MM-DD: the day a due date or an age is counted in. */
export const utcDay = (at: Date | string | number = Date.now()): string => new Date(at).toISOString().slice(0, 10);

/** Whole calendar days from one day (YYYY-MM-DD) to another: positive when `to` is later. */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** Calendar days (UTC) from the day of `at` to today's: 0 for today, whatever the hour. */
export const daysAgo = (at: Date | string, now: Date | number = Date.now()): number =>
  Math.max(0, daysBetween(utcDay(at), utcDay(now)));
