/**
 * Fixed-window counters for the request budgets: in this process, or in Redis (REDIS_URL) so that
 * every instance spends from one budget. Redis is never waited on for long: each call has a short
 * timeout, and after a failure a circuit opens and the counters of this process stand in (each
 * instance then enforces the budgets on its own: never unlimited) until Redis answers a probe
 * again. The state is logged once per change and reported by /readyz.
 */
import { createClient, type RedisClientType } from 'redis';
import type { Logger } from './log.js';

/** A budget's count in its current window after a spend, and the milliseconds until the window ends. */
export type Count = { count: number; resetMs: number };

export interface Counters {
  /** Adds `units` to each counter (0 reads it) and returns their counts, in order. */
  spend(keys: readonly string[], units: number, windowMs: number): Promise<Count[]>;
  /** 'shared' while Redis keeps the counts, 'local' while this process does. */
  readonly mode: 'shared' | 'local';
}

export class MemoryCounters implements Counters {
  readonly mode = 'local' as const;
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  #sweptAt = 0;

  async spend(keys: readonly string[], units: number, windowMs: number): Promise<Count[]> {
    const now = Date.now();
    this.#sweep(now, windowMs);
    return keys.map((key) => {
      let w = this.#windows.get(key);
      if (!w || w.resetAt <= now) {
        w = { count: 0, resetAt: now + windowMs };
        this.#windows.set(key, w);
      }
      w.count += units;
      return { count: w.count, resetMs: w.resetAt - now };
    });
  }

  /** Forgets ended windows, at most once per window length. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#sweptAt < windowMs) return;
    this.#sweptAt = now;
    for (const [key, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(key);
  }
}

/** INCRBY each key, start its window on first use, and return [count, ms left] per key. */
const SPEND_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCRBY', key, ARGV[1])
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  out[#out + 1] = n
  out[#out + 1] = ttl
end
return out`;

export const REDIS_TIMEOUT_MS = 150;
export const REDIS_RETRY_MS = 2000;

export class RedisCounters implements Counters {
  #open = false;
  #probeAt = 0;

  constructor(
    private readonly redis: RedisClientType,
    private readonly local: MemoryCounters,
    private readonly log: Logger,
    private readonly prefix = 'shipyard:rl:',
  ) {}

  get mode(): 'shared' | 'local' {
    return this.#open ? 'local' : 'shared';
  }

  async spend(keys: readonly string[], units: number, windowMs: number): Promise<Count[]> {
    if (this.#open && Date.now() < this.#probeAt) return this.local.spend(keys, units, windowMs);
    // One probe at a time while the circuit is open: the others keep counting locally.
    if (this.#open) this.#probeAt = Date.now() + REDIS_RETRY_MS;
    try {
      const counts = await this.#spendInRedis(keys, units, windowMs);
      if (this.#open) {
        this.#open = false;
        this.log.info('redis answers again: request budgets are shared by every instance');
      }
      return counts;
    } catch (err) {
      if (!this.#open) {
        this.#open = true;
        this.log.error('redis does not answer: request budgets are counted by each instance until it does', { error: (err as Error).message });
      }
      this.#probeAt = Date.now() + REDIS_RETRY_MS;
      return this.local.spend(keys, units, windowMs);
    }
  }

  async #spendInRedis(keys: readonly string[], units: number, windowMs: number): Promise<Count[]> {
    if (!this.redis.isReady) throw new Error('not connected');
    const command = this.redis.sendCommand<number[]>(
      ['EVAL', SPEND_SCRIPT, String(keys.length), ...keys.map((k) => this.prefix + k), String(units), String(windowMs)],
    );
    // A frozen Redis keeps its connection open and never answers: the wait is ours to bound.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS);
    });
    command.catch(() => undefined); // answered after the timeout: nobody is waiting any more
    try {
      const reply = await Promise.race([command, late]);
      return keys.map((_, i) => ({ count: Number(reply[2 * i]), resetMs: Number(reply[2 * i + 1]) }));
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A Redis client that never makes a request wait for it: commands fail at once while it is
 * disconnected (no offline queue) and it reconnects in the background, from the start too, so
 * the service starts and serves with Redis down (the counters count locally meanwhile).
 */
export function connectRedis(url: string, log: Logger): RedisClientType {
  const client: RedisClientType = createClient({
    url, disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(100 + retries * 200, 2000) },
  });
  // The counters log each change of state; the client's own errors would repeat on every retry.
  client.on('error', () => undefined);
  client.connect().catch((err: Error) => log.error('redis connection failed', { error: err.message }));
  return client;
}
