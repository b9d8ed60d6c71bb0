/** The decode queue (src/media/decode-queue.ts): one decode at a time, a few waiting, the rest told to retry. */
import { describe, expect, it } from 'vitest';
import { DecodeQueue } from '../../src/media/decode-queue.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

describe('DecodeQueue', () => {
  it('runs one at a time in arrival order, lets two wait, and refuses a fourth with a 503 to retry', async () => {
    const queue = new DecodeQueue(1, 2);
    const order: string[] = [];
    const first = gate();
    const running = queue.run(async () => {
      order.push('a starts');
      await first.opened;
      order.push('a ends');
      return 'a';
    });
    const waiting = ['b', 'c'].map((name) =>
      queue.run(async () => {
        order.push(`${name} runs`);
        return name;
      }),
    );
    await expect(queue.run(async () => 'd')).rejects.toMatchObject({
      status: 503,
      slug: 'busy',
      headers: { 'Retry-After': '2' },
    });
    expect(order).toEqual(['a starts']);
    first.open();
    expect(await Promise.all([running, ...waiting])).toEqual(['a', 'b', 'c']);
    expect(order).toEqual(['a starts', 'a ends', 'b runs', 'c runs']);
    // Free again: the next one runs at once.
    expect(await queue.run(async () => 'e')).toBe('e');
  });

  it('frees its place when a decode fails', async () => {
    const queue = new DecodeQueue(1, 0);
    await expect(queue.run(async () => Promise.reject(new Error('bad image')))).rejects.toThrow('bad image');
    expect(await queue.run(async () => 'next')).toBe('next');
  });
});
