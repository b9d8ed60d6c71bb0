/**
 * Generated from the contract: for every operation, a key holding every scope but the required
 * one gets 403, and a key holding only the required one gets past the scope check.
 */
import { describe, expect, it } from 'vitest';
import { raw, keyFor, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';

import { loadContract, listOperations, type Operation } from '../src/kernel/contract.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';

const contract = loadContract();
const operations = listOperations(contract);
const scoped = operations.filter((op): op is Operation & { access: { kind: 'scope' } } => op.access.kind === 'scope');

const { t } = useServer();
const requestFor = (op: Operation) => operationRequest(t, contract, op);

describe('scope matrix (from the spec)', () => {
  it('covers every scoped operation of the contract', () => {
    expect(scoped.length).toBeGreaterThanOrEqual(26);
  });

  for (const op of scoped) {
    const required = op.access.scope;
    it(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) needs exactly ${required}`, async () => {
      const { owner, path, body } = await requestFor(op);

      const others = SCOPE_IDS.filter((s) => s !== required);
      const denied = await raw(t, op.method.toUpperCase(), path, {
        token: await keyFor(t, owner.user.id, others),
        body,
      });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(denied.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${required}"`);
      expect(denied.json).toMatchObject({
        type: '/problems/insufficient-scope',
        requiredScope: required,
      });
      expect([...denied.json.grantedScopes].sort()).toEqual([...others].sort());

      const allowed = await raw(t, op.method.toUpperCase(), path, {
        token: await keyFor(t, owner.user.id, [required]),
        body,
      });
      expect(allowed.status, JSON.stringify(allowed.json)).toBeLessThan(300);
    });
  }

  it('serves the spec without a key', async () => {
    const json = await raw(t, 'GET', '/openapi.json');
    expect(json.status).toBe(200);
    expect(json.json.openapi).toBe('3.1.0');
    const yaml = await raw(t, 'GET', '/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(yaml.text).toContain('openapi: 3.1.0');
  });
});

describe('fail closed', () => {
  it('refuses to boot on an operation with no scope tag', () => {
    const doc = structuredClone(contract);
    delete doc.paths['/projects']!.get!['x-required-scope'];
    expect(() => listOperations(doc)).toThrow(/listProjects/);
  });

  it('refuses to boot on an unknown scope', () => {
    const doc = structuredClone(contract);
    doc.paths['/projects']!.get!['x-required-scope'] = 'projects.admin';
    expect(() => listOperations(doc)).toThrow(/unguarded/);
  });
});
