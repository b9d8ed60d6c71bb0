/**
 * Giving back a unit a take spent (src/budgets/counters.ts giveBack), in this process and in Redis:
 * to the window the take saw only, never below zero. The Redis half runs where one answers
 * (REDIS_URL or 127.0.0.1:6379), under its own key prefix.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { redisOrNothing } from '../redis.js';
import { HEARTBEAT_MS, MemoryCounters, RedisCounters, redisLinkOf, type Counters } from '../../src/budgets/counters.js';
import { createLogger } from '../../src/http/log.js';

const redis = await redisOrNothing();
afterAll(async () => {
  await redis?.quit();
});

// Longer than the slack a give-back allows for the window's end (1 s), as every real window is.
const WINDOW_MS = 1500;
const budget = (key: string) => [{ key, limit: 2 }];
/** Takes one unit, as the sign-in budget does, and returns what a give-back needs. */
async function takeOne(counters: Counters, key: string) {
  const at = Date.now();
  const { allowed, counts } = await counters.take(budget(key), 1, WINDOW_MS);
  return { allowed, take: { at, resetMs: counts[0]!.resetMs } };
}

const stores: [string, () => Counters][] = [['in this process', () => new MemoryCounters()]];
if (redis) {
  stores.push([
    'in Redis',
    () =>
      new RedisCounters(
        redisLinkOf(redis),
        new MemoryCounters(),
        createLogger('silent'),
        `shipyard:test:${randomUUID()}:`,
      ),
  ]);
}

describe.each(stores)('giving back a unit %s', (_, make) => {
  it('returns it to the window it was taken from, but never below zero', async () => {
    const counters = make();
    const first = await takeOne(counters, 'a');
    await takeOne(counters, 'a');
    expect((await takeOne(counters, 'a')).allowed).toBe(false);
    await counters.giveBack('a', 1, first.take);
    expect((await takeOne(counters, 'a')).allowed).toBe(true);
    await counters.giveBack('a', 5, first.take);
    expect((await counters.add('a', 0, WINDOW_MS)).count).toBe(0);
    // Redis answered every call: nothing fell back to this process's counters.
    expect(counters.mode).toBe(counters instanceof RedisCounters ? 'shared' : 'local');
  });

  it('gives nothing to a window begun since: the next window holds its whole budget and no more', async () => {
    const counters = make();
    const old = await takeOne(counters, 'b');
    await new Promise((r) => setTimeout(r, WINDOW_MS + 100));
    const now = await takeOne(counters, 'b');
    await counters.giveBack('b', 1, old.take);
    expect((await takeOne(counters, 'b')).allowed).toBe(true);
    expect((await takeOne(counters, 'b')).allowed).toBe(false);
    expect(now.allowed).toBe(true);
  });
});

describe.skipIf(!redis)('the circuit to Redis', () => {
  const connect = async () => {
    const { createClient } = await import('redis');
    const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
    client.on('error', () => undefined);
    await client.connect();
    return client as unknown as NonNullable<typeof redis>;
  };

  it('stays closed when this process was too busy to read an answer that came in time', async () => {
    const counters = new RedisCounters(
      redisLinkOf(redis!),
      new MemoryCounters(),
      createLogger('silent'),
      `shipyard:test:${randomUUID()}:`,
    );
    const taking = counters.take([{ key: 'busy', limit: 5 }], 1, 60_000);
    // The event loop held for twice the Redis timeout, as a burst of work holds it.
    for (const until = Date.now() + 2 * 150 + 50; Date.now() < until; );
    expect((await taking).allowed).toBe(true);
    expect(counters.mode).toBe('shared');
    expect((await counters.add('busy', 0, 60_000)).count).toBe(1);
  });

  const budget = [{ key: 'k', limit: 10 }];
  /**
   * Two instances on one Redis under a fresh prefix, each having spent one unit of `budget`: both
   * told Redis they are alive, and heard of each other at their next heartbeat.
   */
  const twoInstances = async () => {
    const prefix = `shipyard:test:${randomUUID()}:`;
    const clients = [await connect(), await connect()];
    const [a, b] = clients.map(
      (c) => new RedisCounters(redisLinkOf(c), new MemoryCounters(), createLogger('silent'), prefix),
    );
    await a!.take(budget, 1, 60_000);
    await b!.take(budget, 1, 60_000);
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS + 100));
    return { prefix, clients, a: a!, b: b! };
  };
  /** How many units of `of` an instance is allowed before it is refused (at most 20). */
  const allowed = async (c: RedisCounters, of = budget) => {
    let n = 0;
    while ((await c.take(of, 1, 60_000)).allowed && n < 20) n++;
    return n;
  };

  it('divides what is left of each budget among the live instances while Redis is away', async () => {
    const { clients, a, b } = await twoInstances();
    // 8 of the 10 spent, through both.
    for (let i = 0; i < 5; i++) await a.take(budget, 1, 60_000);
    expect((await b.take(budget, 1, 60_000)).counts[0]!.count).toBe(8);
    for (const c of clients) c.destroy();
    // Two left: each instance may spend its half of them, and no more.
    expect([await allowed(a), await allowed(b)]).toEqual([1, 1]);
    expect(a.mode).toBe('local');
  });

  it('keeps counting a peer through a master that has not heard from it yet (a failover)', async () => {
    const { prefix, clients, a, b } = await twoInstances();
    // A replica takes over without the set of live instances (or Redis restarts empty), and `a`
    // beats on it before `b` has: the set says one instance.
    b.close();
    await clients[0]!.del(`${prefix}instances`);
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS + 100));
    expect(await clients[0]!.zCard(`${prefix}instances`)).toBe(1);
    // Redis goes away: `a` spends half of what is left of a fresh budget, not all of it.
    for (const c of clients) c.destroy();
    expect(await allowed(a, [{ key: 'fresh', limit: 10 }])).toBe(5);
    a.close();
  });

  it('keeps counting a peer that a long failover kept from beating, as it kept this one', async () => {
    const prefix = `shipyard:test:${randomUUID()}:`;
    const set = `${prefix}instances`;
    const clients = [await connect(), await connect()];
    // `a` reaches Redis through a link that can be cut, as a master's death cuts it.
    let cut = false;
    const link = redisLinkOf(clients[0]!);
    const cuttable = {
      ...link,
      get isReady() {
        return !cut && link.isReady;
      },
    };
    // `b` first, so that each one's id is known: the set's only member, then the other one.
    const b = new RedisCounters(redisLinkOf(clients[1]!), new MemoryCounters(), createLogger('silent'), prefix);
    const members = async (count: number) => {
      for (let i = 0; i < 50 && (await clients[1]!.zCard(set)) < count; i++)
        await new Promise((r) => setTimeout(r, 100));
      return clients[1]!.zRange(set, 0, -1);
    };
    const [bId] = await members(1);
    const a = new RedisCounters(cuttable, new MemoryCounters(), createLogger('silent'), prefix);
    const aId = (await members(2)).find((id) => id !== bId);
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS + 100));
    b.close();
    // No beat lands for longer than two beats; the master that takes over holds `a` as fresh
    // (it had replicated `a`'s last beat) and `b` as silent since before, by Redis's clock.
    cut = true;
    await new Promise((r) => setTimeout(r, 2.5 * HEARTBEAT_MS));
    expect(a.mode).toBe('local');
    const [seconds, micros] = (await clients[1]!.sendCommand(['TIME'])) as [string, string];
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await clients[1]!.zAdd(set, [
      { score: now, value: aId! },
      { score: now - 10_000, value: bId! },
    ]);
    await clients[1]!.pExpire(set, 5000);
    cut = false;
    for (let i = 0; i < 50 && a.mode !== 'shared'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(a.mode).toBe('shared');
    // `a`'s first beat back dropped `b` as silent: the set says one instance, `a` still counts two.
    expect(await clients[1]!.zCard(set)).toBe(1);
    for (const c of clients) c.destroy();
    expect(await allowed(a, [{ key: 'fresh', limit: 10 }])).toBe(5);
    a.close();
  });

  it('holds an instance that counted only late answers to its share once Redis answers it again', async () => {
    const prefix = `shipyard:test:${randomUUID()}:`;
    const clients = [await connect(), await connect()];
    // One Redis that can freeze: what is sent meanwhile runs, in the order sent, once it thaws.
    let frozen: Promise<void> | undefined;
    let thaw = () => {};
    const [a, b] = clients.map((c) => {
      const link = redisLinkOf(c);
      const freezable = {
        ...link,
        get isReady() {
          return link.isReady;
        },
        eval: async (script: string, keys: string[], args: string[]) => {
          await frozen;
          return link.eval(script, keys, args);
        },
      };
      return new RedisCounters(freezable, new MemoryCounters(), createLogger('silent'), prefix);
    });
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS + 100));
    // The count of two stands, and no heartbeat finds Redis back for either: only the calls below do.
    a!.close();
    b!.close();
    const key = [{ key: 'k', limit: 20 }];
    frozen = new Promise((r) => {
      thaw = r;
    });
    // One request each gives up waiting: counted here for that answer, its command lands later.
    expect((await Promise.all([a!.take(key, 1, 60_000), b!.take(key, 1, 60_000)])).map((t) => t.allowed)).toEqual([
      true,
      true,
    ]);
    expect([a!.mode, b!.mode]).toEqual(['local', 'local']);
    // `b` spends the rest of its share (10) on its own, owed to Redis.
    expect(await allowed(b!, key)).toBe(9);
    thaw();
    // `a` finds Redis back first, holding the two late units and none of what `b` owes.
    for (let i = 0; i < 50 && a!.mode !== 'shared'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await a!.probe();
    }
    expect([a!.mode, b!.mode]).toEqual(['shared', 'local']);
    // What `b` spent is not in Redis yet: `a` may spend no more than its share either.
    expect(await allowed(a!, key)).toBe(9);
    for (const c of clients) c.destroy();
  });
});
