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
    const running = queue.run('a', async () => {
      order.push('a starts');
      await first.opened;
      order.push('a ends');
      return 'a';
    });
    const waiting = ['b', 'c'].map((name) =>
      queue.run(name, async () => {
        order.push(`${name} runs`);
        return name;
      }),
    );
    await expect(queue.run('d', async () => 'd')).rejects.toMatchObject({
      status: 503,
      slug: 'busy',
      headers: { 'Retry-After': '2' },
    });
    expect(order).toEqual(['a starts']);
    first.open();
    expect(await Promise.all([running, ...waiting])).toEqual(['a', 'b', 'c']);
    expect(order).toEqual(['a starts', 'a ends', 'b runs', 'c runs']);
    // Free again: the next one runs at once.
    expect(await queue.run('e', async () => 'e')).toBe('e');
  });

  it('frees its place when a decode fails', async () => {
    const queue = new DecodeQueue(1, 0);
    await expect(queue.run('a', async () => Promise.reject(new Error('bad image')))).rejects.toThrow('bad image');
    expect(await queue.run('a', async () => 'next')).toBe('next');
  });

  it('takes one decode per account at a time, so one account cannot hold every place', async () => {
    const queue = new DecodeQueue(1, 8);
    const first = gate();
    const running = queue.run('ada', () => first.opened.then(() => 'ada'));
    await expect(queue.run('ada', async () => 'again')).rejects.toMatchObject({
      status: 503,
      detail: expect.stringMatching(/One of your uploads is still being decoded/),
    });
    const other = queue.run('bob', async () => 'bob');
    first.open();
    expect(await Promise.all([running, other])).toEqual(['ada', 'bob']);
    expect(await queue.run('ada', async () => 'later')).toBe('later');
  });
});
