/**
 * The password policy on its own thread (src/users/password-thread.ts), as the server and the CLI
 * run it: each check gets its own answer, a full queue is refused with a 503, and a thread that
 * ends fails what waited for it and is replaced.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/kernel/problem.js';
import { startPasswordThread, type PasswordThread } from '../../src/users/password-thread.js';

const account = { username: 'ada', email: 'ada@example.test' };
let thread: PasswordThread | undefined;
afterEach(async () => {
  await thread?.stop();
  thread = undefined;
});

describe('the password thread', () => {
  it('answers each of several checks asked at once with its own problems', async () => {
    thread = startPasswordThread();
    await thread.ready;
    const [weak, strong, short, named] = await Promise.all([
      thread.check('passwordpassword', account),
      thread.check('velvet quasar lantern 71 umbrella', account),
      thread.check('short', account),
      thread.check('ada lovelace engines', account),
    ]);
    expect(weak.join(' ')).toMatch(/would try it early/);
    expect(strong).toEqual([]);
    expect(short.join(' ')).toMatch(/at least 15 characters/);
    expect(named.join(' ')).toMatch(/must not contain your username/);
  });

  it('checks a password of the longest length allowed', async () => {
    thread = startPasswordThread();
    const random = Array.from({ length: 1024 }, (_, i) => String.fromCharCode(33 + ((i * 37) % 94))).join('');
    expect(await thread.check(random, account)).toEqual([]);
    expect((await thread.check(`${'password'.repeat(8)}${random.slice(64)}`, account)).join(' ')).toMatch(
      /would try it early/,
    );
  });

  it('refuses a check beyond the checks it lets wait, with a 503 to retry; the others are answered', async () => {
    thread = startPasswordThread({ maxWaiting: 3 });
    const asked = Array.from({ length: 4 }, () => thread!.check('velvet quasar lantern 71 umbrella', account));
    const settled = await Promise.allSettled(asked);
    expect(settled.slice(0, 3).map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const refused = settled[3] as PromiseRejectedResult;
    expect(refused.status).toBe('rejected');
    expect(refused.reason).toBeInstanceOf(ProblemError);
    expect(refused.reason).toMatchObject({ status: 503, slug: 'unavailable', headers: { 'Retry-After': '2' } });
    // Once answered, the queue takes checks again.
    expect(await thread.check('velvet quasar lantern 71 umbrella', account)).toEqual([]);
  });

  it('answers a 503 to the checks waiting for a thread that ended, says why, and starts another for the next', async () => {
    const ended: Error[] = [];
    thread = startPasswordThread({
      onEnded: (err) => ended.push(err),
      worker: {
        url: new URL('../fixtures/password-worker-that-ends.ts', import.meta.url),
        execArgv: ['--import', 'tsx'],
      },
    });
    await thread.ready;
    await expect(thread.check('end', account)).rejects.toMatchObject({
      status: 503,
      detail: 'The password check was interrupted; nothing was changed. Retry in a few seconds.',
    });
    expect(ended.map((e) => e.message)).toEqual(['the password check thread ended (exit code 3)']);
    expect(await thread.check('anything', account)).toEqual([]);
  });

  it('refuses checks once stopped, and a stop is not an end to report', async () => {
    const ended: Error[] = [];
    const stopped = startPasswordThread({ onEnded: (err) => ended.push(err) });
    await stopped.stop();
    expect(ended).toEqual([]);
    await expect(stopped.check('velvet quasar lantern 71 umbrella', account)).rejects.toThrow('stopped');
  });
});
