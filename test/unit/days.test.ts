/** Calendar days in UTC (src/kernel/days.ts): what due dates, overdue and a project's pulse are counted in. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { calendarDaysUntil, daysAgo, daysBetween, utcDay } from '../../src/kernel/days.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('daysAgo', () => {
  it('counts calendar days in UTC, not 24-hour spans', () => {
    const now = Date.parse('2026-11-30T00:30:00.000Z');
    expect(daysAgo('2026-11-29T23:59:59.999Z', now)).toBe(1);
    expect(daysAgo('2026-11-30T00:00:00.000Z', now)).toBe(0);
    expect(daysAgo(new Date('2026-11-01T12:00:00.000Z'), now)).toBe(29);
    expect(daysAgo('2025-11-30T23:00:00.000Z', now)).toBe(365);
  });

  it('is never negative: a time later today or tomorrow is 0 days ago', () => {
    const now = Date.parse('2026-11-30T08:00:00.000Z');
    expect(daysAgo('2026-11-30T23:00:00.000Z', now)).toBe(0);
    expect(daysAgo('2026-12-02T00:00:00.000Z', now)).toBe(0);
  });

  it('agrees with daysBetween of the two days', () => {
    const now = Date.parse('2026-03-29T01:15:00.000Z');
    for (const at of ['2024-02-29T23:59:59.000Z', '2025-12-31T00:00:00.000Z', '2026-03-28T23:00:00.000Z']) {
      expect(daysAgo(at, now)).toBe(daysBetween(utcDay(at), utcDay(now)));
    }
  });
});

describe('calendarDaysUntil', () => {
  it('counts calendar days in UTC to a later time, and below zero to an earlier one', () => {
    const now = Date.parse('2026-11-30T23:30:00.000Z');
    expect(calendarDaysUntil(new Date('2026-12-01T00:10:00.000Z'), now)).toBe(1);
    expect(calendarDaysUntil(new Date('2026-11-30T00:00:00.000Z'), now)).toBe(0);
    expect(calendarDaysUntil(new Date('2026-11-28T12:00:00.000Z'), new Date(now))).toBe(-2);
  });
});

describe('utcDay', () => {
  it('gives the day of a time, and today when given none', () => {
    expect(utcDay('2026-11-30T23:59:59.999Z')).toBe('2026-11-30');
    expect(utcDay(Date.parse('2026-12-01T00:00:00.000Z'))).toBe('2026-12-01');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-30T23:59:59.999Z'));
    expect(utcDay()).toBe('2026-11-30');
    vi.setSystemTime(new Date('2026-12-01T00:00:00.000Z'));
    expect(utcDay()).toBe('2026-12-01');
    // A clock set back is followed too.
    vi.setSystemTime(new Date('2026-11-29T12:00:00.000Z'));
    expect(utcDay()).toBe('2026-11-29');
  });
});
