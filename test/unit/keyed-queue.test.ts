/** Writers queued by key (src/kernel/keyed-queue.ts): one at a time per key, in order, bounded. */
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from '../../src/kernel/keyed-queue.js';
import { ProblemError } from '../../src/kernel/problem.js';

const later = () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  return { gate, open };
};

describe('a keyed queue', () => {
  it('runs one at a time per key, in the order they came, and keys apart at once', async () => {
    const q = new KeyedQueue({ concurrency: 1, maxWaiting: 10 });
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const first = later();
    const job = (name: string, wait?: Promise<void>) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await wait;
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const a1 = q.run('a', job('a1', first.gate));
    const a2 = q.run('a', job('a2'));
    const b1 = q.run('b', job('b1'));
    expect(await b1).toBe('b1'); // another key does not wait for a
    expect(log).toEqual(['start a1', 'start b1', 'end b1']);
    first.open();
    expect(await Promise.all([a1, a2])).toEqual(['a1', 'a2']);
    expect(log.slice(3)).toEqual(['end a1', 'start a2', 'end a2']);
    expect(most).toBe(2);
  });

  it('goes on after a failure, and refuses past its bound with a 503 that says when to retry', async () => {
    const q = new KeyedQueue({ concurrency: 1, maxWaiting: 2 });
    const hold = later();
    const failing = q.run('p', async () => {
      await hold.gate;
      throw new Error('boom');
    });
    const next = q.run('p', async () => 'next');
    const third = q.run('p', async () => 'third');
    const refused = await q.run('p', async () => 'too many').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ status: 503, slug: 'busy', headers: { 'Retry-After': '1' } });
    hold.open();
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
    expect(await third).toBe('third');
    // Drained: the key starts afresh.
    expect(await q.run('p', async () => 'again')).toBe('again');
  });

  it('lets `concurrency` run at once per key, and no more', async () => {
    const q = new KeyedQueue({ concurrency: 2, maxWaiting: 10 });
    let running = 0;
    let most = 0;
    const gates = Array.from({ length: 5 }, later);
    const runs = gates.map((g) =>
      q.run('k', async () => {
        running++;
        most = Math.max(most, running);
        await g.gate;
        running--;
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(running).toBe(2);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(most).toBe(2);
  });
});
