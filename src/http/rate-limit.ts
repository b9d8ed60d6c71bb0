/**
 * Request budgets, counted by src/budgets/counters.ts (per process, or shared in Redis):
 * - per API key and per user, on every authenticated request (REST and MCP share them; an MCP
 *   POST spends one unit per JSON-RPC request it carries), so that neither batching nor many
 *   keys multiply what one person may send; both are announced in the IETF draft-8
 *   `RateLimit-Policy` / `RateLimit` headers of every response;
 * - per client address, for refused authentications only: once an address has sent too many
 *   missing or bad keys, its requests that fail authentication get 429 instead of 401, while a
 *   request with a valid key is never refused by it (a bad neighbour cannot lock others out);
 * - per client address, for failed web sign-ins and every sign-up.
 * Over budget: 429 problem+json with Retry-After.
 */
import { hash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import { roomNeeded, type Budget, type Count, type Counters } from '../budgets/counters.js';
import { ProblemError } from '../kernel/problem.js';
import { measure } from '../telemetry/telemetry.js';
import type { FailedAuth, FreeOpening } from './kit/budget-hooks.js';
import { costOf, type OperationObject } from '../kernel/contract.js';
import type { RateLimits } from '../kernel/limits.js';

/** How many times an address's sign-in budget an account's is. */
const ACCOUNT_FACTOR = 5;
/** Failed web sign-ins and sign-ups per client address, per 15 minutes, before 429. */
const SIGN_IN_WINDOW_MS = 15 * 60_000;
const MINUTE_MS = 60_000;

/** The client's address as a budget's name (IPv6 by its /56, as express-rate-limit groups them). */
const addressOf = (req: Request) => ipKeyGenerator(req.ip ?? '');
/** A partition key for the headers: names the budget without revealing the key or user id (9 bytes of its SHA-256: 12 base64 characters). */
const partition = (name: string) => hash('sha256', name, 'base64').slice(0, 12);
/**
 * The same, kept for the budgets every request announces (a key's, a user's, an address's): each
 * such name is hashed once. Only names the server made go in (ids, addresses), and at most 10,000.
 */
const announcedPartition = (name: string): string => {
  let key = partitions.get(name);
  if (key === undefined) {
    if (partitions.size >= 10_000) partitions.clear();
    key = partition(name);
    partitions.set(name, key);
  }
  return key;
};
const partitions = new Map<string, string>();
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The budget a refusal spent, as the rate-limit metric names it (never whose it was). */
type Spent = 'key' | 'user' | 'address' | 'failed_auth' | 'sign_in' | 'sign_up';

function tooMany(detail: string, retryAfterS: number, budget: Spent): ProblemError {
  measure.rateLimitRefusals.add(1, { 'shipyard.budget': budget });
  return new ProblemError(
    429,
    'rate-limited',
    'Too many requests',
    `${detail}; retry in ${retryAfterS} seconds.`,
    {},
    { 'Retry-After': String(retryAfterS) },
  );
}

declare global {
  namespace Express {
    interface Request {
      /** What this request spends of its budgets, when its operation's cost does not say (an MCP POST: one per JSON-RPC request). */
      budgetUnits?: number;
      /** A sign-in from a browser its account signed in from before: it spends that device's budget. */
      knownDevice?: string;
      /** The account a sign-in names (`user:<id>`, or `login:<login>` when none has it): its budget. */
      signInAccount?: string;
    }
  }
}

type Policy = { policy: string; key: string; limit: number; refusal: string; spent: Spent };

/** The budgets a request spends: its key's and its user's, or (public and session operations) its address's. */
const windowOf = (limits: RateLimits) => limits.windowMs ?? MINUTE_MS;
const per = (limits: RateLimits) =>
  windowOf(limits) === MINUTE_MS ? 'in a minute' : `in ${windowOf(limits) / 1000} seconds`;

function budgetsOf(req: Request, limits: RateLimits): Policy[] {
  const actor = req.actor;
  if (actor?.keyId) {
    // Both counters carry the user's id as their hash tag ({…}): on a Redis Cluster they share a
    // slot, so one script spends from both at once.
    return [
      {
        policy: 'per-key',
        key: `key:{${actor.userId}}:${actor.keyId}`,
        limit: limits.requestsPerMinutePerKey,
        spent: 'key',
        refusal: `This API key made more than ${limits.requestsPerMinutePerKey} requests ${per(limits)}`,
      },
      {
        policy: 'per-user',
        key: `user:{${actor.userId}}`,
        limit: limits.requestsPerMinutePerUser,
        spent: 'user',
        refusal: `The API keys of this account made more than ${limits.requestsPerMinutePerUser} requests ${per(limits)} together`,
      },
    ];
  }
  return [
    {
      policy: 'per-address',
      key: `ip:${addressOf(req)}`,
      limit: limits.requestsPerMinutePerKey,
      spent: 'address',
      refusal: `This address made more than ${limits.requestsPerMinutePerKey} requests ${per(limits)}`,
    },
  ];
}

function announce(res: Response, budgets: Policy[], counts: Count[], windowS: number, units: number): void {
  if (res.headersSent) return;
  const cost = units === 1 ? '' : `; cost=${units}`;
  res.setHeader(
    'RateLimit-Policy',
    budgets
      .map((b) => `"${b.policy}"; q=${b.limit}; w=${windowS}; pk=:${announcedPartition(b.key)}:${cost}`)
      .join(', '),
  );
  res.setHeader(
    'RateLimit',
    budgets
      .map((b, i) => `"${b.policy}"; r=${Math.max(0, b.limit - counts[i]!.count)}; t=${seconds(counts[i]!.resetMs)}`)
      .join(', '),
  );
}

/**
 * Spends the request's budgets (after authentication): all of them or, when one has no room
 * left, none (429 naming it). A request that is refused costs nothing, and neither does one the
 * server turns away before doing anything (503 busy or unavailable).
 */
export function requestBudget(counters: Counters, limits: RateLimits): RequestHandler {
  return async function requestBudget(req, res, next) {
    try {
      const budgets = budgetsOf(req, limits);
      // An operation's cost is in the contract (x-cost): an upload's decoding, a search's ranking.
      const units = req.budgetUnits ?? costOf(req.openapi?.schema as OperationObject | undefined);
      const at = Date.now();
      const { allowed, counts } = await counters.take(budgets, units, windowOf(limits));
      announce(res, budgets, counts, windowOf(limits) / 1000, units);
      if (allowed) {
        // A refusal the client did not cause, made before any work (the server busy, its database
        // away: res.locals.costsNothing) costs nothing: the units go back to the window they were
        // taken from. A timeout or a fault of ours may have done the work, and keeps them.
        res.on('finish', () => {
          if (res.locals.costsNothing !== true) return;
          for (const [i, b] of budgets.entries())
            void counters.giveBack(b.key, units, { at, resetMs: counts[i]!.resetMs }).catch(() => undefined);
        });
        return next();
      }
      const full = budgets.findIndex((b, i) => counts[i]!.count + roomNeeded(budgets, units) > b.limit);
      const refusal = full >= 0 ? budgets[full]! : budgets[0]!;
      const more =
        units > 1 && counts[Math.max(full, 0)]!.count < refusal.limit
          ? ` (this request carries ${units} calls, more than are left)`
          : '';
      next(tooMany(`${refusal.refusal}${more}`, seconds(counts[Math.max(full, 0)]!.resetMs), refusal.spent));
    } catch (err) {
      next(err);
    }
  };
}

/**
 * How many `notifications/initialized` a key may send free per window: one per connection it
 * opens, and no client opens this many a minute. Past it, each costs a unit like any request, so
 * a key cannot flood an instance with free messages.
 */
export const FREE_OPENINGS_PER_WINDOW = 30;

export function freeOpenings(counters: Counters, limits: RateLimits): FreeOpening {
  return async (req) => {
    const keyId = req.actor?.keyId;
    if (!keyId) return false;
    const { allowed } = await counters.take(
      [{ key: `opening:${keyId}`, limit: FREE_OPENINGS_PER_WINDOW }],
      1,
      windowOf(limits),
    );
    return allowed;
  };
}

/**
 * The failed-authentication budget: counts each refused authentication of an address and turns
 * the refusal into a 429 once the address is over budget. It is consulted only when
 * authentication has already failed, so it never stands in front of a valid key.
 */
export function failedAuthBudget(counters: Counters, limits: RateLimits): FailedAuth {
  return async (req, refusal) => {
    const spent = await counters.add(`auth:${addressOf(req)}`, 1, windowOf(limits));
    if (spent.count <= limits.failedAuthPerMinutePerAddress) return refusal;
    return tooMany(
      'Too many requests with a missing or invalid API key from this address',
      seconds(spent.resetMs),
      'failed_auth',
    );
  };
}

/**
 * Web sign-ins and sign-ups, 15 minutes at a time. Every attempt takes a unit before any work (so
 * a burst sent at once gets no more than the budget) and is refused with 429 once none is left.
 * A sign-in spends from its address's budget and from the account's it names, five times as
 * large and the same whether the account was named by username or email (so neither one address
 * nor many can guess at one account without bound); a sign-in from a browser that
 * account signed in from before (`req.knownDevice`) spends from that device's budget instead, so
 * that others at the same address (an office behind one NAT) cannot lock its owner out. A
 * sign-in keeps its units only when it was a wrong guess (401): a success, or the server failing
 * it (a database out of reach), gives them back. A sign-up spends its address's budget and
 * always keeps it: refused (400, 409), turned away while passwords wait (503) or made, since
 * each new account is what a flood of sign-ups would be after.
 */
export function signInBudget(
  counters: Counters,
  limits: RateLimits,
): { signIn: RequestHandler; signUp: RequestHandler } {
  const limit = limits.signInAttemptsPerAddress ?? 10;
  const limiter =
    (
      spends: (req: Request) => { budgets: Budget[]; refusal: string },
      keepsUnit: (status: number) => boolean,
      which: Spent,
    ): RequestHandler =>
    async (req, res, next) => {
      try {
        const spent = spends(req);
        const budgets = spent.budgets;
        const at = Date.now();
        const { allowed, counts } = await counters.take(budgets, 1, SIGN_IN_WINDOW_MS);
        if (!allowed) {
          const retryAfter = seconds(Math.max(...counts.map((c) => c.resetMs)));
          res.setHeader('Retry-After', String(retryAfter));
          return next(tooMany(spent.refusal, retryAfter, which));
        }
        res.on('finish', () => {
          if (keepsUnit(res.statusCode)) return;
          for (const [i, b] of budgets.entries())
            void counters.giveBack(b.key, 1, { at, resetMs: counts[i]!.resetMs }).catch(() => undefined);
        });
        next();
      } catch (err) {
        next(err);
      }
    };
  const fromAddress = (req: Request) => `signin:${addressOf(req)}`;
  const signIn = limiter(
    (req) => {
      if (req.knownDevice)
        return {
          budgets: [{ key: `device:${req.knownDevice}`, limit }],
          refusal: 'Too many sign-in attempts from this browser',
        };
      return {
        budgets: [
          { key: fromAddress(req), limit },
          // Higher than an address's: guessing at an account from many addresses is bounded, while
          // locking its owner out of a new browser takes a sustained effort from several of them.
          { key: `account:${partition(req.signInAccount ?? '')}`, limit: ACCOUNT_FACTOR * limit },
        ],
        refusal: 'Too many sign-in attempts from this address, or for this account',
      };
    },
    (status) => status === 401,
    'sign_in',
  );
  const signUp = limiter(
    (req) => ({
      budgets: [{ key: fromAddress(req), limit }],
      refusal: 'Too many sign-in and sign-up attempts from this address',
    }),
    () => true,
    'sign_up',
  );
  return { signIn, signUp };
}

/**
 * express-rate-limit's store over these counters, for the limiters that come with the MCP SDK's
 * OAuth handlers (/authorize, /token, /register, /revoke): their counts are then shared by every
 * instance through Redis, as every other budget is, instead of kept per process.
 */
export class SharedLimitStore implements Store {
  readonly localKeys = false;
  #windowMs = MINUTE_MS;

  constructor(
    private readonly counters: Counters,
    readonly prefix: string,
  ) {}

  init(options: Options): void {
    this.#windowMs = options.windowMs;
  }

  async #add(key: string, units: number): Promise<IncrementResponse> {
    const { count, resetMs } = await this.counters.add(`${this.prefix}${key}`, units, this.#windowMs);
    return { totalHits: count, resetTime: new Date(Date.now() + resetMs) };
  }

  get(key: string): Promise<IncrementResponse> {
    return this.#add(key, 0);
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.#add(key, 1);
  }

  async decrement(key: string): Promise<void> {
    await this.#add(key, -1);
  }

  async resetKey(key: string): Promise<void> {
    const { totalHits } = await this.#add(key, 0);
    if (totalHits > 0) await this.#add(key, -totalHits);
  }
}
