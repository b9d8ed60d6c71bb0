import { describe, expect, it } from 'vitest';
import { CountsCache } from '../../src/platform/counts-cache.js';

/** A count that says how many times it was taken, and that finishes when the test says so. */
function counter() {
  let taken = 0;
  const waiting: Array<{ resolve: (n: number) => void; reject: (e: Error) => void }> = [];
  return {
    get taken() {
      return taken;
    },
    count: () => {
      taken += 1;
      return new Promise<number>((resolve, reject) => waiting.push({ resolve, reject }));
    },
    finish: (value: number) => waiting.shift()!.resolve(value),
    fail: (message: string) => waiting.shift()!.reject(new Error(message)),
  };
}

describe('CountsCache', () => {
  it('keeps a count for maxAgeMs from when it was started, then takes it again', async () => {
    let now = 1_000;
    const cache = new CountsCache<number>(60_000, () => now);
    const c = counter();
    const first = cache.get(c.count);
    now += 500; // the count itself took 500 ms
    c.finish(7);
    expect(await first).toBe(7);
    now += 59_000; // 59.5 s after it was started
    expect(await cache.get(c.count)).toBe(7);
    expect(c.taken).toBe(1);
    now += 500; // 60 s after it was started
    const second = cache.get(c.count);
    c.finish(8);
    expect(await second).toBe(8);
    expect(c.taken).toBe(2);
  });

  it('gives callers that arrive during a count that count, instead of starting their own', async () => {
    const cache = new CountsCache<number>(60_000);
    const c = counter();
    const calls = [cache.get(c.count), cache.get(c.count), cache.get(c.count)];
    expect(c.taken).toBe(1);
    c.finish(3);
    expect(await Promise.all(calls)).toEqual([3, 3, 3]);
    expect(c.taken).toBe(1);
  });

  it('keeps no failed count: its callers get the error, the next caller counts again', async () => {
    const cache = new CountsCache<number>(60_000);
    const c = counter();
    const calls = [cache.get(c.count), cache.get(c.count)];
    c.fail('database gone');
    for (const call of calls) await expect(call).rejects.toThrow('database gone');
    const again = cache.get(c.count);
    expect(c.taken).toBe(2);
    c.finish(5);
    expect(await again).toBe(5);
  });

  it('counts on every call when maxAgeMs is 0, concurrent calls included', async () => {
    const cache = new CountsCache<number>(0);
    const c = counter();
    const calls = [cache.get(c.count), cache.get(c.count)];
    expect(c.taken).toBe(2);
    c.finish(1);
    c.finish(2);
    expect(await Promise.all(calls)).toEqual([1, 2]);
    const third = cache.get(c.count);
    c.finish(3);
    expect(await third).toBe(3);
  });
});
