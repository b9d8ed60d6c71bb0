const DAY_MS = 86_400_000;

/** The UTC day a time falls on, counted in days since 1970-01-01. */
const dayNumber = (at: Date | string | number): number => Math.floor(new Date(at).getTime() / DAY_MS);

/**
 * Days from today to the day `at` falls on, by the calendar (UTC, as dates are shown): a key
 * chosen to last until the end of tomorrow expires "tomorrow", though more than a day is left.
 */
export const calendarDaysUntil = (at: Date, now: Date | number = Date.now()): number => dayNumber(at) - dayNumber(now);

/** "today", "tomorrow" or "in N days", for a count from `calendarDaysUntil`. */
export const inDays = (days: number): string => (days <= 0 ? 'today' : days === 1 ? 'tomorrow' : `in ${days} days`);

/** Today (UTC) as utcDay gives it, by its day number: made once a day, not once a call. */
let today = { number: Number.NaN, day: '' };

/**
 * The UTC day a time falls on, as YYYY-MM-DD: the day a due date or an age is counted in. Without
 * a time, today's: a roadmap asks once per milestone.
 */
export const utcDay = (at?: Date | string | number): string => {
  if (at !== undefined) return new Date(at).toISOString().slice(0, 10);
  const number = dayNumber(Date.now());
  if (number !== today.number) today = { number, day: new Date(number * DAY_MS).toISOString().slice(0, 10) };
  return today.day;
};

/** Whole calendar days from one day (YYYY-MM-DD) to another: positive when `to` is later. */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** Calendar days (UTC) from the day of `at` to today's: 0 for today, whatever the hour. */
export const daysAgo = (at: Date | string, now: Date | number = Date.now()): number =>
  Math.max(0, dayNumber(now) - dayNumber(at));
