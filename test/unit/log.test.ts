/** The logger's batching (src/http/log.ts): pure logic, on a captured stderr. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, flushLog } from '../../src/http/log.js';

let writes: string[] = [];
const write = process.stderr.write.bind(process.stderr);
beforeEach(() => {
  flushLog();
  writes = [];
  process.stderr.write = ((chunk: string | Uint8Array) => (writes.push(String(chunk)), true)) as typeof process.stderr.write;
});
afterEach(() => {
  process.stderr.write = write;
});
const turn = () => new Promise((r) => setImmediate(r));
const lines = () => writes.join('').trim().split('\n').map((l) => JSON.parse(l) as { level: string; msg: string; n?: number });

describe('logger', () => {
  it('writes the info lines of one turn of the event loop together, in one write, in order', async () => {
    const log = createLogger('info');
    for (let n = 0; n < 5; n++) log.info('request', { n });
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toHaveLength(1);
    expect(lines().map((l) => l.n)).toEqual([0, 1, 2, 3, 4]);
  });

  it('writes an error at once, after the lines waiting before it', () => {
    const log = createLogger('info');
    log.info('first');
    log.error('boom', { error: new Error('bad') });
    expect(lines().map((l) => [l.level, l.msg])).toEqual([['info', 'first'], ['error', 'boom']]);
  });

  it('does not hold more than 64 KiB', () => {
    const log = createLogger('info');
    const big = 'x'.repeat(1000);
    for (let n = 0; n < 70; n++) log.info('request', { big });
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((w) => w.length <= 64 * 1024 + 1100)).toBe(true);
  });

  it('writes nothing below its level', async () => {
    createLogger('error').info('quiet');
    createLogger('silent').error('quiet');
    await turn();
    expect(writes).toEqual([]);
  });
});
