/**
 * Image decoding, one at a time per process. libvips decodes on threads of its own, but on a
 * small machine two decodes at once take every core, and the event loop that answers everyone
 * else's reads waits for CPU behind them. So decodes queue: one runs, a few wait, and an upload
 * beyond that is told to come back (503 with Retry-After) rather than piling up memory and
 * latency for the whole instance.
 */
import { ProblemError } from '../kernel/problem.js';

export class DecodeQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Whose decode is running or waiting: one each, so one account cannot hold every place. */
  private readonly owners = new Set<string>();

  constructor(
    private readonly concurrency = 1,
    private readonly maxWaiting = 8,
  ) {}

  async run<T>(owner: string, work: () => Promise<T>): Promise<T> {
    if (this.owners.has(owner))
      throw busy('One of your uploads is still being decoded; send the next once it is done.');
    if (this.running >= this.concurrency && this.waiting.length >= this.maxWaiting) throw busy();
    this.owners.add(owner);
    try {
      if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running++;
      return await this.#finish(work);
    } finally {
      this.owners.delete(owner);
    }
  }

  async #finish<T>(work: () => Promise<T>): Promise<T> {
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

const busy = (
  detail = 'This server is decoding as many uploaded images as it takes at once; nothing was stored. Retry the upload in a few seconds.',
) => new ProblemError(503, 'busy', 'Busy', detail, {}, { 'Retry-After': '2' });
