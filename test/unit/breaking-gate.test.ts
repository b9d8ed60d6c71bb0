/** The breaking-change gate (codegen/check-breaking.ts) on small contracts: what it lets through and what it stops. */
import { describe, expect, it } from 'vitest';
import { gate } from '../../codegen/check-breaking.js';

const contract = (version: string, paths: object) => ({ openapi: '3.1.0', info: { title: 't', version }, paths });
const op = (extra: object = {}) => ({
  operationId: 'getThing',
  parameters: [{ name: 'q', in: 'query', required: false, schema: { type: 'string', ...extra } }],
  responses: {
    '200': {
      description: 'ok',
      content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } },
    },
  },
});
const released = contract('1.0.0', { '/things': { get: op() } });
const log = (version: string, breaking = '') =>
  `# API changes\n\n## ${version} — 2026-11-24\n\n### Added\n- things\n\n### Breaking (accepted)\n${breaking}\n`;

describe('check-breaking', () => {
  it('passes an unchanged contract, and an added operation under a new version', () => {
    expect(gate(released, released, '')).toEqual([]);
    const grown = contract('1.1.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.1.0'))).toEqual([]);
  });

  it('stops a change without a new version or without its changelog section', () => {
    const grown = contract('1.0.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.0.0')).join('\n')).toMatch(/info.version is still 1.0.0/);
    expect(gate(released, { ...grown, info: { title: 't', version: '1.1.0' } }, log('1.0.9')).join('\n')).toMatch(
      /no section "## 1.1.0/,
    );
  });

  it('stops a breaking change the changelog does not accept, and lets it through once it does', () => {
    const removed = contract('2.0.0', {});
    expect(gate(released, removed, log('2.0.0')).join('\n')).toMatch(
      /breaking, not accepted in the changelog: remove \/paths\/~1things/,
    );
    expect(
      gate(
        released,
        removed,
        log('2.0.0', '- `remove /paths/~1things/get` — replaced by /others (announced 2026-05-01)'),
      ),
    ).toEqual([]);
    const narrowed = contract('1.1.0', { '/things': { get: op({ maxLength: 10 }) } });
    expect(gate(released, narrowed, log('1.1.0')).join('\n')).toMatch(/not accepted.*maxLength/);
    expect(gate(released, narrowed, log('1.1.0', '- `add /paths/**/maxLength` — the server never took more'))).toEqual(
      [],
    );
  });

  it('stops an accepted entry that matches nothing (stale)', () => {
    const grown = contract('1.1.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.1.0', '- `remove /paths/~1gone` — was never there')).join('\n')).toMatch(
      /matches no breaking change/,
    );
  });
});
