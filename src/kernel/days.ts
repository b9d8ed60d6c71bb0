const DAY_MS = 86_400_000;

/**
 * Days from today to the day `at` falls on, by the calendar (UTC, as dates are shown): a key
 * chosen to last until the end of tomorrow expires "tomorrow", though more than a day is left.
 */
export const calendarDaysUntil = (at: Date, now: Date | number = Date.now()): number =>
  Math.floor(at.getTime() / DAY_MS) - Math.floor(new Date(now).getTime() / DAY_MS);

/** "today", "tomorrow" or "in N days", for a count from `calendarDaysUntil`. */
export const inDays = (days: number): string => (days <= 0 ? 'today' : days === 1 ? 'tomorrow' : `in ${days} days`);
