/**
 * Image decoding, one at a time per process. libvips decodes on threads of its own, but on a
 * small machine two decodes at once take every core, and the event loop that answers everyone
 * else's reads waits for CPU behind them. So decodes queue: one runs, a few wait, and an upload
 * beyond that is told to come back (503 with Retry-After) rather than piling up memory and
 * latency for the whole instance.
 */
import { ProblemError } from '../http/problem.js';

export class DecodeQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency = 1,
    private readonly maxWaiting = 8,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      // The next waiting decode takes this one's place (running stays counted), or the place is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

const busy = () =>
  new ProblemError(
    503,
    'busy',
    'Busy decoding images',
    'This server is decoding as many uploaded images as it takes at once; nothing was stored. Retry the upload in a few seconds.',
    {},
    { 'Retry-After': '2' },
  );
