/**
 * Request budgets: in memory for one process, or in Redis (REDIS_URL) so that every instance
 * of the service spends from the same budget. Two limiters:
 * - per API key, on every authenticated request (REST and MCP share the budget), with the
 *   IETF draft-8 `RateLimit` / `RateLimit-Policy` headers on every response;
 * - per client address, counting only requests refused for a missing or bad key (401), so
 *   guessing keys is slow while well-behaved clients never meet it.
 * Over budget: 429 problem+json with Retry-After.
 */
import type { RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator, MemoryStore, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { RedisClientType } from 'redis';
import { ProblemError } from './problem.js';

export type RateLimits = { requestsPerMinutePerKey: number; failedAuthPerMinutePerAddress: number };
export type RateLimiters = { perKey: RequestHandler; failedAuthPerAddress: RequestHandler };

const WINDOW_MS = 60_000;

function tooMany(detail: string, retryAfter: string | undefined): ProblemError {
  return new ProblemError(429, 'rate-limited', 'Too many requests', `${detail}; retry in ${retryAfter ?? 'a few'} seconds.`);
}

/**
 * Counts only refused authentications (401) per client address, and blocks the address once
 * over budget. Unlike a limiter that counts every request and gives successes back afterwards,
 * requests in flight never count, so heavy legitimate traffic cannot trip it.
 */
function failedAuthLimiter(limit: number, redis: RedisClientType | undefined): RequestHandler {
  const store: Store = redis
    ? new RedisStore({ prefix: 'shipyard:rl:auth:', sendCommand: (...args: string[]) => redis.sendCommand(args) })
    : new MemoryStore();
  store.init?.({ windowMs: WINDOW_MS } as Parameters<NonNullable<Store['init']>>[0]);
  return async (req, res, next) => {
    const key = ipKeyGenerator(req.ip ?? '');
    try {
      const info = await store.get?.(key);
      if (info && info.totalHits >= limit && (!info.resetTime || info.resetTime.getTime() > Date.now())) {
        const retry = info.resetTime ? Math.max(1, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : WINDOW_MS / 1000;
        res.setHeader('Retry-After', retry);
        return next(tooMany('Too many requests with a missing or invalid API key from this address', String(retry)));
      }
    } catch {
      // the store is unreachable: let the request through rather than refuse everyone
    }
    res.on('finish', () => {
      if (res.statusCode === 401) void Promise.resolve(store.increment(key)).catch(() => undefined);
    });
    next();
  };
}

/** Each limiter needs a store of its own. A Redis outage lets requests through (logged) rather than failing them. */
function redisStore(redis: RedisClientType | undefined, prefix: string): { store?: Store; passOnStoreError: boolean } {
  if (!redis) return { passOnStoreError: false };
  return { store: new RedisStore({ prefix: `shipyard:rl:${prefix}:`, sendCommand: (...args: string[]) => redis.sendCommand(args) }), passOnStoreError: true };
}

export function createRateLimiters(limits: RateLimits, redis?: RedisClientType): RateLimiters {
  const perKey = rateLimit({
    ...redisStore(redis, 'key'),
    windowMs: WINDOW_MS,
    limit: limits.requestsPerMinutePerKey,
    identifier: 'per-key',
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    // Runs after authentication; the key id is the budget's name (never the token).
    keyGenerator: (req) => (req.actor?.keyId ? `key:${req.actor.keyId}` : `ip:${ipKeyGenerator(req.ip ?? '')}`),
    handler: (_req, res, next) =>
      next(tooMany(`This API key made more than ${limits.requestsPerMinutePerKey} requests in a minute`, res.getHeader('Retry-After')?.toString())),
  });
  const failedAuthPerAddress = failedAuthLimiter(limits.failedAuthPerMinutePerAddress, redis);
  return { perKey, failedAuthPerAddress };
}
