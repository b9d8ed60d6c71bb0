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

export type RateLimits = { requestsPerMinutePerKey: number; failedAuthPerMinutePerAddress: number; failedSignInsPerAddress?: number };
export type RateLimiters = { perKey: RequestHandler; failedAuthPerAddress: RequestHandler; failedSignInPerAddress: RequestHandler };

/** Failed web sign-ins (and sign-ups) per client address, per 15 minutes, before 429. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

const WINDOW_MS = 60_000;

function tooMany(detail: string, retryAfter: string | undefined): ProblemError {
  return new ProblemError(429, 'rate-limited', 'Too many requests', `${detail}; retry in ${retryAfter ?? 'a few'} seconds.`);
}

/**
 * Counts only refused authentications (401) per client address, and blocks the address once
 * over budget. Unlike a limiter that counts every request and gives successes back afterwards,
 * requests in flight never count, so heavy legitimate traffic cannot trip it.
 */
function failureLimiter(
  opts: { limit: number; windowMs: number; prefix: string; failed: (status: number) => boolean; detail: string },
  redis: RedisClientType | undefined,
): RequestHandler {
  const { limit, windowMs } = opts;
  const store: Store = redis
    ? new RedisStore({ prefix: `shipyard:rl:${opts.prefix}:`, sendCommand: (...args: string[]) => redis.sendCommand(args) })
    : new MemoryStore();
  store.init?.({ windowMs } as Parameters<NonNullable<Store['init']>>[0]);
  return async (req, res, next) => {
    const key = ipKeyGenerator(req.ip ?? '');
    try {
      const info = await store.get?.(key);
      if (info && info.totalHits >= limit && (!info.resetTime || info.resetTime.getTime() > Date.now())) {
        const retry = info.resetTime ? Math.max(1, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : windowMs / 1000;
        res.setHeader('Retry-After', retry);
        return next(tooMany(opts.detail, String(retry)));
      }
    } catch {
      // the store is unreachable: let the request through rather than refuse everyone
    }
    res.on('finish', () => {
      if (opts.failed(res.statusCode)) void Promise.resolve(store.increment(key)).catch(() => undefined);
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
  const failedAuthPerAddress = failureLimiter({
    limit: limits.failedAuthPerMinutePerAddress, windowMs: WINDOW_MS, prefix: 'auth', failed: (status) => status === 401,
    detail: 'Too many requests with a missing or invalid API key from this address',
  }, redis);
  // Web sign-in: a wrong password answers 401, a refused sign-up 400/409; both spend the budget.
  const failedSignInPerAddress = failureLimiter({
    limit: limits.failedSignInsPerAddress ?? 10, windowMs: SIGN_IN_WINDOW_MS, prefix: 'signin', failed: (status) => status === 401 || status === 409,
    detail: 'Too many failed sign-ins from this address',
  }, redis);
  return { perKey, failedAuthPerAddress, failedSignInPerAddress };
}
