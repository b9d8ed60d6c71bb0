/**
 * The logger writes one JSON line per event with its fields, errors with their stack, and
 * replaces anything named like a secret, however deep a caller put it.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, isoTime } from '../../src/http/log.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, sink };
}

describe('the logger', () => {
  it("writes each line's time as Date#toISOString does, to the millisecond", () => {
    const start = Date.parse('2026-11-30T23:59:59.000Z');
    for (const ms of [0, 7, 42, 999, 1000, 1001, 60_000, -86_400_000, 5, 0.5, -1.5, 3e14]) {
      const at = start + ms;
      expect(isoTime(at)).toBe(`,"time":"${new Date(at).toISOString()}"`);
    }
  });

  it('writes JSON lines with the level, time, message and fields', () => {
    const { lines, sink } = capture();
    const log = createLogger('info', sink);
    log.info('request', { method: 'GET', path: '/api/v1/projects', status: 200 });
    log.error('unhandled error', { error: new TypeError('boom') });
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      path: '/api/v1/projects',
      status: 200,
    });
    expect(new Date(first.time).toISOString()).toBe(first.time);
    expect(second).toMatchObject({
      level: 'error',
      msg: 'unhandled error',
      error: { type: 'TypeError', message: 'boom' },
    });
    expect(second.error.stack).toContain('TypeError: boom');
  });

  it('writes nothing below its level', () => {
    const { lines, sink } = capture();
    createLogger('error', sink).info('request', {});
    createLogger('silent', sink).error('unhandled error', {});
    expect(lines).toEqual([]);
  });

  it('never writes a field named like a secret', () => {
    const { lines, sink } = capture();
    createLogger('info', sink).info('oops', {
      authorization: 'Bearer shipyard_pat_secret1',
      headers: { authorization: 'Bearer shipyard_pat_secret2', cookie: 'shipyard_session=abc' },
      token: 'shipyard_pat_secret3',
      body: { password: 'hunter2 hunter2' },
    });
    expect(lines.join('\n')).not.toMatch(/secret1|secret2|secret3|hunter2|abc/);
    expect(JSON.parse(lines[0]!).headers.authorization).toBe('[redacted]');
  });
});
