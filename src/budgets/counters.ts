/**
 * Fixed-window counters for the request budgets: in this process, or in Redis (REDIS_URL) so that
 * every instance spends from one budget. Redis is never waited on for long: a call whose answer is
 * late waits on only until answers have stayed late for a second (a busy machine, not an outage),
 * and after a failure a circuit opens and the counters of this process stand in (each
 * instance then enforces the budgets on its own: never unlimited) until Redis answers again,
 * which is tried every REDIS_RETRY_MS by the next request or readiness check. The state is logged
 * once per change and reported by /readyz.
 */
import { randomUUID } from 'node:crypto';
import { createClient, createCluster, createSentinel, type RedisClientType } from 'redis';
import type { Logger } from '../kernel/logger.js';

/** A budget's count in its current window, and the milliseconds until the window ends. */
export type Count = { count: number; resetMs: number };
/** A budget: its counter's name and the most its window may hold. */
export type Budget = { key: string; limit: number };
export type Taken = { allowed: boolean; counts: Count[] };

export interface Counters {
  /**
   * Spends `units` from every budget if each has room for them (for at least one unit, when
   * `units` is 0), and from none otherwise: a refused request costs nothing, so a key that ran
   * out cannot use up its account's budget for its sibling keys. The counts as they then stand.
   */
  take(budgets: readonly Budget[], units: number, windowMs: number): Promise<Taken>;
  /** Adds `units` (0 reads it) to one counter without a limit: failures, counted to refuse later. */
  add(key: string, units: number, windowMs: number): Promise<Count>;
  /** Sets a mark that lasts `ms` from now, however long the one before had left (a sliding window). */
  mark(key: string, ms: number): Promise<void>;
  /**
   * Gives back `units` that a take spent from one budget, to the window that take saw (it ended
   * `resetMs` after the take, its `counts[].resetMs`): never below zero, and nothing once that
   * window is over, so that a window begun since owes nothing.
   */
  giveBack(key: string, units: number, take: { at: number; resetMs: number }): Promise<void>;
  /** Tries Redis again now if it is due (readiness checks call it, so an idle instance recovers too). */
  probe(): Promise<void>;
  /** 'shared' while Redis keeps the counts, 'local' while this process does. */
  readonly mode: 'shared' | 'local';
  /** Stops what runs on its own (the heartbeat that tells other instances this one serves). */
  close(): void;
}

export class MemoryCounters implements Counters {
  readonly mode = 'local' as const;
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  #sweptAt = 0;

  async take(budgets: readonly Budget[], units: number, windowMs: number): Promise<Taken> {
    const windows = budgets.map((b) => this.#window(b.key, windowMs));
    const need = roomNeeded(budgets, units);
    const allowed = budgets.every((b, i) => windows[i]!.count + need <= b.limit);
    if (allowed) for (const w of windows) w.count += units;
    const now = Date.now();
    return { allowed, counts: windows.map((w) => ({ count: w.count, resetMs: w.resetAt - now })) };
  }

  async add(key: string, units: number, windowMs: number): Promise<Count> {
    const w = this.#window(key, windowMs);
    w.count += units;
    return { count: w.count, resetMs: w.resetAt - Date.now() };
  }

  async mark(key: string, ms: number): Promise<void> {
    this.#windows.set(key, { count: 1, resetAt: Date.now() + ms });
  }

  async giveBack(key: string, units: number, take: { at: number; resetMs: number }): Promise<void> {
    const w = this.#windows.get(key);
    if (w && sameWindow(w.resetAt - Date.now(), take)) w.count = Math.max(0, w.count - units);
  }

  /** Sets a counter to what was last seen elsewhere (Redis), for the window that ends in `resetMs`. */
  seed(key: string, count: number, resetMs: number): void {
    const now = Date.now();
    this.#sweep(now, SEED_SWEEP_MS);
    if (resetMs > 0) this.#windows.set(key, { count, resetAt: now + resetMs });
  }

  /** Forgets ended windows, at most once per `everyMs`. */
  #sweep(now: number, everyMs: number): void {
    if (now - this.#sweptAt < everyMs) return;
    this.#sweptAt = now;
    for (const [k, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(k);
  }

  async probe(): Promise<void> {}

  close(): void {}

  #window(key: string, windowMs: number): { count: number; resetAt: number } {
    const now = Date.now();
    // Ended windows are forgotten at most once per window length.
    this.#sweep(now, windowMs);
    let w = this.#windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + windowMs };
      this.#windows.set(key, w);
    }
    return w;
  }
}

/**
 * KEYS: the budgets' counters; ARGV: units, the units there must be room for, the window (ms),
 * then each budget's limit. Spends from all or none; returns [allowed, count, ms left, …].
 */
const TAKE_SCRIPT = `
local units, need, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local counts, ttls, allowed = {}, {}, 1
for i, key in ipairs(KEYS) do
  counts[i] = tonumber(redis.call('GET', key) or '0')
  ttls[i] = redis.call('PTTL', key)
  if ttls[i] < 0 then ttls[i] = window end
  if counts[i] + need > tonumber(ARGV[3 + i]) then allowed = 0 end
end
if allowed == 1 and units > 0 then
  for i, key in ipairs(KEYS) do
    counts[i] = redis.call('INCRBY', key, units)
    if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, window) end
  end
end
local out = {allowed}
for i = 1, #KEYS do
  out[#out + 1] = counts[i]
  out[#out + 1] = ttls[i]
end
return out`;

/** INCRBY one counter, start its window on first use; returns [count, ms left]. */
const ADD_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {n, ttl}`;

/** KEYS: one mark; ARGV: how long it lasts from now (ms). Returns [1]. */
const MARK_SCRIPT = `redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
return {1}`;

/**
 * KEYS: one counter; ARGV: units, the time its window must have left (ms), the slack (ms).
 * Returns [units given back].
 */
const GIVE_BACK_SCRIPT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 or math.abs(ttl - tonumber(ARGV[2])) > tonumber(ARGV[3]) then return {0} end
local back = math.min(n, tonumber(ARGV[1]))
if back > 0 then redis.call('DECRBY', KEYS[1], back) end
return {back}`;

/**
 * How far a window's end may seem to move between a take and its give-back (clock steps, Redis's
 * round trip); a window begun since ends at least its whole length later.
 */
const SAME_WINDOW_SLACK_MS = 1000;
/** Whether a window that ends in `leftMs` is the one a take saw end `take.resetMs` after `take.at`. */
const sameWindow = (leftMs: number, take: { at: number; resetMs: number }) =>
  leftMs > 0 && Math.abs(leftMs - (take.at + take.resetMs - Date.now())) <= SAME_WINDOW_SLACK_MS;

/** How long an answer may take before it counts as late. */
const REDIS_TIMEOUT_MS = 150;
/**
 * How long answers may stay late, counted from the first late one, before the circuit opens (a
 * refused connection opens it at once): meanwhile a late call keeps waiting for its answer.
 */
const OPEN_AFTER_SLOW_MS = 1000;
/** The most counters whose units are owed to Redis at once. */
const OWED_MAX = 50_000;
/** Redis did not answer in time; `landing` settles when it does, or fails when the command is lost. */
class LateAnswer extends Error {
  constructor(
    message: string,
    readonly landing: Promise<unknown>,
  ) {
    super(message);
  }
}
const REDIS_RETRY_MS = 2000;
/** How often the seeds Redis's answers leave in this process are swept, once their windows end. */
const SEED_SWEEP_MS = 60_000;
/** How many times a wait starts over because this process's thread was busy, at most. */
const BUSY_RESTARTS = 3;

/**
 * Calls `expire` once `ms` have passed in which this process's thread was free. A timer that fires
 * late by more than half its length means the thread was held (the client's queued writes and the
 * answers waiting to be read were held with it), so the wait starts over, at most `maxRestarts`
 * times (with none, it is a plain wait on the clock). When it does expire, it does so after one
 * more turn of the event loop's I/O poll (setImmediate runs after it), so that an answer that
 * arrived meanwhile is read first.
 */
function lagAwareTimeout(ms: number, expire: () => void, maxRestarts = BUSY_RESTARTS): { cancel(): void } {
  let timeout: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const arm = (restarts: number) => {
    const due = performance.now() + ms;
    timeout = setTimeout(() => {
      if (performance.now() - due > ms / 2 && restarts < maxRestarts) return arm(restarts + 1);
      immediate = setImmediate(expire);
    }, ms);
  };
  arm(0);
  return {
    cancel() {
      clearTimeout(timeout);
      clearImmediate(immediate);
    },
  };
}

/**
 * The room a request needs in each budget: its units (one at least), but never more than the
 * smallest budget holds, so that a request that costs more than a whole budget (an upload under a
 * small RATE_LIMIT_PER_MINUTE, or under an instance's share while Redis is away) can still be
 * made once in an untouched window, instead of never.
 */
export const roomNeeded = (budgets: readonly Budget[], units: number) =>
  Math.min(Math.max(units, 1), ...budgets.map((b) => b.limit));

/** A counter's hash tag: the part between its first `{` and the next `}`, which alone names its Cluster slot. */
const hashTag = (key: string) => /\{([^}]+)\}/.exec(key)?.[1];
/** Whether one script may touch every budget's counter on a Redis Cluster: one budget, or all with one tag. */
const oneSlot = (budgets: readonly Budget[]) => {
  if (budgets.length <= 1) return true;
  const tag = hashTag(budgets[0]!.key);
  return tag !== undefined && budgets.every((b) => hashTag(b.key) === tag);
};

/** How often an instance says it is alive: on a timer of its own, requests or none. */
export const HEARTBEAT_MS = 1000;
/** How long an instance counts as alive after its last heartbeat: a few missed beats. */
const ALIVE_MS = 5 * HEARTBEAT_MS;

/**
 * Registers this instance and counts the live ones, by Redis's clock: [how many, 1 when this
 * instance was not in the set]. KEYS: the set; ARGV: id.
 */
const HEARTBEAT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${ALIVE_MS})
redis.call('PEXPIRE', KEYS[1], ${ALIVE_MS})
return {redis.call('ZCARD', KEYS[1]), added}`;

/**
 * While the circuit is open, each instance spends from its share of every budget: the budget
 * divided by the instances alive when Redis last answered (each says so on a timer of its own,
 * every HEARTBEAT_MS, whether or not it serves requests), starting from its share of what Redis
 * had counted. What it spends meanwhile is written back to Redis before anything else once Redis
 * answers again, and until the window it counted in ends, a budget it counted keeps its share as
 * a second limit: the instances that have not yet written theirs back cannot make room that was
 * already spent. docs/security.md states the bound this gives; an instance started during the
 * outage knows of no other, and allows a whole budget.
 */
export class RedisCounters implements Counters {
  #open = false;
  #probeAt = 0;
  #probing: Promise<void> | undefined;
  readonly #id = randomUUID();
  /** The instances alive at the last heartbeat, this one included. */
  #instances = 1;
  /** Whether a heartbeat of this instance has landed in Redis before, and when the last one did. */
  #beaten = false;
  #beatAt = 0;
  /**
   * The count held through a set that was lost, until when: a master that takes over (or a
   * Redis restarted) holds no peer that has not beaten on it yet, so the count from before stands
   * until the peers had ALIVE_MS to say they are there.
   */
  #held = { count: 1, until: 0 };
  readonly #beat: NodeJS.Timeout;
  /** Units spent here while Redis was away, by counter, not yet written back: with their window's end. */
  readonly #owed = new Map<string, { units: number; resetAt: number }>();
  /** Counters this instance counted on its own, until the end of the window it counted them in. */
  readonly #kept = new Map<string, number>();
  /** Whether the client has connected once: until then the heartbeat waits (requests still use the circuit). */
  #connected = false;
  /** Since when Redis's answers have come late (none since), while the circuit is closed. */
  #slowSince: number | undefined;
  /** The write-back under way, if one is. */
  #writing: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisLink,
    private readonly local: MemoryCounters,
    private readonly log: Logger,
    private readonly prefix = 'shipyard:rl:',
  ) {
    this.#beat = setInterval(() => void this.#heartbeat(), HEARTBEAT_MS).unref();
    void this.#heartbeat();
  }

  get mode(): 'shared' | 'local' {
    return this.#open ? 'local' : 'shared';
  }

  /** Stops the heartbeat (the instance's peers stop counting it once ALIVE_MS has passed). */
  close(): void {
    clearInterval(this.#beat);
  }

  take(budgets: readonly Budget[], units: number, windowMs: number): Promise<Taken> {
    return this.#either(
      () =>
        this.redis.cluster && !oneSlot(budgets)
          ? this.#takeOneByOne(budgets, units, windowMs)
          : this.#takeShared(budgets, units, windowMs),
      () => this.#takeLocally(budgets, units, windowMs),
      // A late answer (waited on until answers had stayed late for a second, or a probe's): the
      // script was sent and lands in Redis if it ever runs, so the take is counted here for this
      // answer, and not owed to Redis (it would count twice). It is kept as a second limit for the
      // rest of the window all the same: a call sent before the circuit opened (a heartbeat) may
      // be answered in time once Redis thaws and close the circuit at once, while the peers have
      // not yet written back what they spent on their own, and Redis's count alone would let this
      // instance spend that again. Should the command be lost instead (the master died with it in
      // flight), what was allowed here is owed after all.
      async (late) => {
        const at = Date.now();
        const taken = await this.#takeLocally(budgets, units, windowMs, { owe: false });
        // Owed to the window the take was counted in (its end as seen now, not when the loss is heard).
        if (taken.allowed)
          late.landing.catch(() => {
            for (const [i, b] of budgets.entries()) {
              const resetAt = at + taken.counts[i]!.resetMs;
              if (resetAt > Date.now()) this.#owe(b.key, units, resetAt);
            }
          });
        return taken;
      },
    );
  }

  /**
   * Budgets whose counters may sit on different Cluster nodes (a sign-in's address and account):
   * each spent by a script of its own, and what was spent given back when a later one refuses, so
   * that it is still all or none.
   */
  async #takeOneByOne(budgets: readonly Budget[], units: number, windowMs: number): Promise<Taken> {
    const at = Date.now();
    const counts: Count[] = [];
    const giveBackSpent = (upTo: number) =>
      Promise.all(
        budgets
          .slice(0, upTo)
          .map((spent, j) =>
            this.giveBack(spent.key, units, { at, resetMs: counts[j]!.resetMs }).catch(() => undefined),
          ),
      );
    for (const [i, budget] of budgets.entries()) {
      let taken: Taken;
      try {
        taken = await this.#takeShared([budget], units, windowMs);
      } catch (err) {
        // Redis failed half-way: what was spent goes back, and the whole take is counted here instead.
        await giveBackSpent(i);
        throw err;
      }
      counts.push(taken.counts[0]!);
      if (!taken.allowed) {
        await giveBackSpent(i);
        for (const rest of budgets.slice(i + 1)) counts.push(await this.add(rest.key, 0, windowMs));
        return { allowed: false, counts };
      }
    }
    return { allowed: true, counts };
  }

  async #takeShared(budgets: readonly Budget[], units: number, windowMs: number): Promise<Taken> {
    const now = Date.now();
    const kept = budgets.filter((b) => (this.#kept.get(b.key) ?? 0) > now);
    // A budget counted here during an outage in this window: its share here is a limit too.
    let keptTaken: Taken | undefined;
    if (kept.length) {
      keptTaken = await this.local.take(this.#shares(kept), units, windowMs);
      if (!keptTaken.allowed) return { allowed: false, counts: this.#asShares(budgets, kept, keptTaken) };
    }
    let reply: number[];
    try {
      reply = await this.#eval(
        TAKE_SCRIPT,
        budgets.map((b) => b.key),
        [units, roomNeeded(budgets, units), windowMs, ...budgets.map((b) => b.limit)],
      );
    } catch (err) {
      if (keptTaken) await this.#giveBackKept(kept, units, keptTaken, now);
      throw err;
    }
    const taken = {
      allowed: reply[0] === 1,
      counts: budgets.map((_, i) => ({ count: reply[1 + 2 * i]!, resetMs: reply[2 + 2 * i]! })),
    };
    if (keptTaken && !taken.allowed) await this.#giveBackKept(kept, units, keptTaken, now);
    // This instance's share of what is spent, ready for the moment Redis stops answering (a
    // counter it keeps counts on in this window already holds what it spent here).
    for (const [i, b] of budgets.entries()) {
      if (kept.includes(b)) continue;
      const { count, resetMs } = taken.counts[i]!;
      this.local.seed(b.key, Math.ceil(count / this.#instances), resetMs);
    }
    if (!keptTaken) return taken;
    const mine = this.#asShares(budgets, kept, keptTaken);
    return {
      allowed: taken.allowed,
      counts: taken.counts.map((c, i) => (mine[i]!.count > c.count ? mine[i]! : c)),
    };
  }

  async #giveBackKept(kept: Budget[], units: number, taken: Taken, at: number): Promise<void> {
    for (const [i, b] of kept.entries())
      await this.local.giveBack(b.key, units, { at, resetMs: taken.counts[i]!.resetMs });
  }

  /** Spends from this instance's share of each budget while Redis is away, and owes Redis what it spent. */
  async #takeLocally(
    budgets: readonly Budget[],
    units: number,
    windowMs: number,
    { keep = true, owe = true } = {},
  ): Promise<Taken> {
    const taken = await this.local.take(this.#shares(budgets), units, windowMs);
    const now = Date.now();
    for (const [i, b] of budgets.entries()) {
      const resetAt = now + taken.counts[i]!.resetMs;
      if (keep) this.#kept.set(b.key, resetAt);
      if (taken.allowed && owe) this.#owe(b.key, units, resetAt);
    }
    return { allowed: taken.allowed, counts: this.#asShares(budgets, budgets, taken) };
  }

  #owe(key: string, units: number, resetAt: number): void {
    if (units <= 0) return;
    // Bounded: an outage that meets more counters than this (many addresses, many clients) loses
    // the oldest debts rather than the process's memory.
    if (this.#owed.size >= OWED_MAX && !this.#owed.has(key)) this.#owed.delete(this.#owed.keys().next().value!);
    const owed = this.#owed.get(key);
    if (owed && owed.resetAt > Date.now()) owed.units += units;
    else this.#owed.set(key, { units, resetAt });
  }

  /**
   * The counts of `budgets` as their whole limits see them, where `counted` (some of them) were
   * counted against this instance's shares: what is left of a share is what is left of the budget.
   */
  #asShares(budgets: readonly Budget[], counted: readonly Budget[], taken: Taken): Count[] {
    const shares = this.#shares(counted);
    return budgets.map((b) => {
      const i = counted.indexOf(b);
      if (i < 0) return { count: 0, resetMs: 0 };
      const { count, resetMs } = taken.counts[i]!;
      return { count: count + b.limit - shares[i]!.limit, resetMs };
    });
  }

  /** Each budget as this instance's share of it, while the instances count on their own. */
  #shares(budgets: readonly Budget[]): Budget[] {
    return budgets.map((b) => ({ key: b.key, limit: Math.max(1, Math.floor(b.limit / this.#instances)) }));
  }

  /**
   * Says this instance is alive and learns how many are: every HEARTBEAT_MS, through the circuit,
   * so that it is also how an idle instance finds Redis gone, and back.
   */
  async #heartbeat(): Promise<void> {
    // Not before the client has first connected: a service starting beside its Redis is not an outage.
    if (!this.#connected) {
      if (!this.redis.isReady) return;
      this.#connected = true;
    }
    const now = Date.now();
    for (const [key, until] of this.#kept) if (until <= now) this.#kept.delete(key);
    for (const [key, owed] of this.#owed) if (owed.resetAt <= now) this.#owed.delete(key);
    const beat = await this.#either(
      async () => await this.#eval(HEARTBEAT_SCRIPT, ['instances'], [], [this.#id]),
      async () => undefined,
    );
    if (beat === undefined) return;
    const [n = 1, added = 0] = beat;
    // A clock that cannot step: a wall-clock correction is no gap.
    const landed = performance.now();
    // Not in the set although it has beaten before: the set was lost (a failover, a restart). Or
    // back after beats that could not land (a failover that outlasted them): the peers could not
    // beat either, and this beat has just dropped them from the set as silent. While Redis keeps
    // flapping so, the hold renews itself and a peer that left meanwhile is still counted: smaller
    // shares, never more than the budget.
    const gap = landed - this.#beatAt > 2 * HEARTBEAT_MS;
    if (this.#beaten && (added === 1 || gap)) this.#held = { count: this.#instances, until: landed + ALIVE_MS };
    this.#beaten = true;
    this.#beatAt = landed;
    this.#instances = Math.max(1, n, landed < this.#held.until ? this.#held.count : 1);
  }

  /** What was spent here while Redis was away, added to Redis's counts (each to the window it was spent in). */
  #writeBack(): Promise<void> {
    // One at a time: calls that find Redis back together write each owed unit once.
    this.#writing ??= this.#writeBackNow().finally(() => {
      this.#writing = undefined;
    });
    return this.#writing;
  }

  async #writeBackNow(): Promise<void> {
    const now = Date.now();
    const due = [...this.#owed];
    // Taken out first: what is spent here while they are written is owed anew, not lost.
    this.#owed.clear();
    const failed: [string, { units: number; resetAt: number }][] = [];
    let error: unknown;
    await Promise.all(
      due.map(async ([key, owed]) => {
        if (owed.resetAt <= now) return;
        try {
          await this.#eval(ADD_SCRIPT, [key], [owed.units, owed.resetAt - now]);
        } catch (err) {
          // A late write lands when Redis runs it: owed again only when it is lost.
          if (err instanceof LateAnswer) err.landing.catch(() => this.#owe(key, owed.units, owed.resetAt));
          else failed.push([key, owed]);
          error ??= err;
        }
      }),
    );
    for (const [key, owed] of failed) this.#owe(key, owed.units, owed.resetAt);
    // The first failure, as it was (a late answer is not an outage).
    if (error) throw error;
  }

  add(key: string, units: number, windowMs: number): Promise<Count> {
    return this.#either(
      async () => {
        const [count, resetMs] = await this.#eval(ADD_SCRIPT, [key], [units, windowMs]);
        return { count: count!, resetMs: resetMs! };
      },
      async () => {
        const count = await this.local.add(key, units, windowMs);
        if (this.#open) this.#owe(key, units, Date.now() + count.resetMs);
        return count;
      },
      // Sent but not answered: owed only if the command is lost (as a late take).
      async (late) => {
        const count = await this.local.add(key, units, windowMs);
        const resetAt = Date.now() + count.resetMs;
        late.landing.catch(() => this.#owe(key, units, resetAt));
        return count;
      },
    );
  }

  mark(key: string, ms: number): Promise<void> {
    return this.#either(
      async () => void (await this.#eval(MARK_SCRIPT, [key], [ms])),
      () => this.local.mark(key, ms),
    );
  }

  giveBack(key: string, units: number, take: { at: number; resetMs: number }): Promise<void> {
    return this.#either(
      async () => {
        if ((this.#kept.get(key) ?? 0) > Date.now()) await this.local.giveBack(key, units, take);
        await this.#eval(GIVE_BACK_SCRIPT, [key], [units, take.at + take.resetMs - Date.now(), SAME_WINDOW_SLACK_MS]);
      },
      () => this.local.giveBack(key, units, take),
    );
  }

  /**
   * Asks Redis now (at most one question at a time): a readiness check then tells a frozen or
   * lost Redis without waiting for a request to meet it, and an idle instance recovers by itself.
   */
  probe(): Promise<void> {
    if (this.#open && Date.now() < this.#probeAt) return Promise.resolve();
    this.#probing ??= this.add('probe', 0, 1000)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.#probing = undefined;
      });
    return this.#probing;
  }

  /**
   * Redis while it answers; this process's counters while the circuit is open, and when a call
   * fails. The call that finds Redis back first writes back what was spent meanwhile.
   */
  async #either<T>(
    shared: () => Promise<T>,
    local: () => Promise<T>,
    whileSlow: (late: LateAnswer) => Promise<T> = local,
  ): Promise<T> {
    if (this.#open && Date.now() < this.#probeAt) return local();
    // One probe at a time while the circuit is open: the others keep counting locally.
    const wasOpen = this.#open;
    if (wasOpen) this.#probeAt = Date.now() + REDIS_RETRY_MS;
    try {
      // What was counted here meanwhile (the circuit open, or answers late) goes back first. Its
      // late answer is not this call's: this call's own command was never sent.
      if (wasOpen || this.#owed.size)
        await this.#writeBack().catch((err: unknown) => {
          throw err instanceof LateAnswer ? new Error(err.message) : err;
        });
      const result = await shared();
      this.#slowSince = undefined;
      if (this.#open) {
        this.#open = false;
        this.log.info('redis answers again: request budgets are shared by every instance');
        // What calls made meanwhile spent here, while this one was finding Redis back; what cannot
        // be written now stays owed, for the next call that finds Redis back.
        await this.#writeBack().catch(() => undefined);
      }
      return result;
    } catch (err) {
      if (!this.#open) {
        this.#open = true;
        this.log.error('redis does not answer: request budgets are counted by each instance until it does', {
          error: (err as Error).message,
        });
      }
      this.#probeAt = Date.now() + REDIS_RETRY_MS;
      // A call whose own command was sent but not answered: it still lands in Redis if Redis ever
      // runs it, so it is counted here for this answer only (the calls that gave up together with
      // the one that opened the circuit included).
      return err instanceof LateAnswer ? whileSlow(err) : local();
    }
  }

  async #eval(script: string, keys: string[], args: number[], text: string[] = []): Promise<number[]> {
    if (!this.redis.isReady) throw new Error('not connected');
    const command = this.redis.eval(
      script,
      keys.map((k) => this.prefix + k),
      [...args.map(String), ...text],
    );
    // A frozen Redis keeps its connection open and never answers: the wait is ours to bound. Only
    // time in which this process could read counts against the bound: when its own thread was busy
    // (an upload's decoding, a burst of requests), the client may not even have written the command
    // yet, so CPU load alone never opens the circuit.
    command.catch(() => undefined); // answered after the timeout: nobody is waiting any more
    const sent = Date.now();
    if (await answeredWithin(command, (expire) => lagAwareTimeout(REDIS_TIMEOUT_MS, expire)))
      return ((await command) as unknown[]).map(Number);
    // Late, from a Redis that answered a moment ago: a busy machine (its Redis starved of CPU while
    // this thread was free) rather than an outage, so the call waits on for its answer, until
    // answers have stayed late for OPEN_AFTER_SLOW_MS (an answer that completes a call starts the
    // count again). This wait is a plain one, on the clock: at most that second, never restarted.
    // An open circuit's probe does not wait on.
    if (!this.#open) {
      this.#slowSince ??= Date.now();
      const left = this.#slowSince + OPEN_AFTER_SLOW_MS - Date.now();
      if (left > 0 && (await answeredWithin(command, (expire) => lagAwareTimeout(left, expire, 0))))
        return ((await command) as unknown[]).map(Number);
    }
    throw new LateAnswer(`no answer within ${Date.now() - sent} ms`, command);
  }
}

/** Whether `command` settled before `timer` expired (a failed one included: awaiting it throws). */
async function answeredWithin(
  command: Promise<unknown>,
  timeout: (expire: () => void) => { cancel(): void },
): Promise<boolean> {
  let timer: { cancel(): void } | undefined;
  const late = new Promise<false>((resolve) => {
    timer = timeout(() => resolve(false));
  });
  try {
    return await Promise.race([
      command.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    timer?.cancel();
  }
}

/**
 * What the counters need of Redis, whichever way it is deployed: a script run on keys that share
 * one hash slot, and whether the client is connected now. The client library's own support for
 * Sentinel and Cluster finds the master, follows a failover and routes each script to its slot's
 * node (RedisLink's three makers, below).
 */
export interface RedisLink {
  readonly isReady: boolean;
  /** A Cluster: a script's keys must share a slot. */
  readonly cluster?: boolean;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  close(): void;
}

/** How to reach Redis: one server (REDIS_URL), a Sentinel-watched master, or a Cluster. */
export type RedisSettings =
  | { url: string }
  | { sentinels: { host: string; port: number }[]; master: string; password?: string }
  | { cluster: { host: string; port: number }[]; password?: string };

const RECONNECT = (retries: number) => Math.min(100 + retries * 200, 2000);

/**
 * A Redis client that never makes a request wait for it: commands fail at once while it is
 * disconnected (no offline queue) and it reconnects in the background, from the start too, so
 * the service starts and serves with Redis down (the counters count locally meanwhile). On
 * Sentinel it asks the sentinels for the master and follows a failover; on Cluster it learns the
 * slots from any node and sends each script to its slot's master.
 */
export function connectRedis(settings: RedisSettings, log: Logger): RedisLink {
  const socket = { connectTimeout: 2000, reconnectStrategy: RECONNECT };
  const failed = (err: Error) => log.error('redis connection failed', { error: err.message });
  if ('url' in settings) {
    const client: RedisClientType = createClient({ url: settings.url, disableOfflineQueue: true, socket });
    // The counters log each change of state; the client's own errors would repeat on every retry.
    client.on('error', () => undefined);
    client.connect().catch(failed);
    return redisLinkOf(client);
  }
  if ('sentinels' in settings) {
    const sentinel = createSentinel({
      name: settings.master,
      sentinelRootNodes: settings.sentinels,
      nodeClientOptions: { disableOfflineQueue: true, socket, password: settings.password },
      sentinelClientOptions: { socket },
    });
    sentinel.on('error', () => undefined);
    sentinel.connect().catch(failed);
    return {
      get isReady() {
        return sentinel.isReady;
      },
      eval: (script, keys, args) =>
        sentinel.sendCommand(false, ['EVAL', script, String(keys.length), ...keys, ...args]),
      close: () => void sentinel.destroy().catch(() => undefined),
    };
  }
  const cluster = createCluster({
    rootNodes: settings.cluster.map(({ host, port }) => ({ socket: { host, port } })),
    defaults: { disableOfflineQueue: true, socket, password: settings.password },
  });
  cluster.on('error', () => undefined);
  cluster.connect().catch(failed);
  return {
    cluster: true,
    get isReady() {
      return cluster.isReady;
    },
    // The first key names the slot (every key of one script shares its hash tag).
    eval: (script, keys, args) =>
      cluster.sendCommand(keys[0], false, ['EVAL', script, String(keys.length), ...keys, ...args]),
    close: () => {
      if (cluster.isOpen) cluster.destroy();
    },
  };
}

/** One Redis server's client as the counters use it. */
export function redisLinkOf(client: RedisClientType): RedisLink {
  return {
    get isReady() {
      return client.isReady;
    },
    eval: (script, keys, args) => client.sendCommand(['EVAL', script, String(keys.length), ...keys, ...args]),
    close: () => {
      if (client.isOpen) client.destroy();
    },
  };
}
