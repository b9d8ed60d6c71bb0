import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/webhooks/secrets.js';
/**
 * OWASP API9:2023 Improper Inventory Management — the contract is the inventory: every route
 * the server answers under /api/v1 is in it (the MCP endpoint too, marked x-mcp), and nothing
 * answers outside it. (/healthz and /readyz live outside the API, for operators.)
 */
import { createLogger } from '../../src/http/log.js';
import { describe, expect, it } from 'vitest';
import { raw, useServer } from '../harness.js';
import { HTTP_METHODS, listOperations, loadContract } from '../../src/kernel/contract.js';
import { allHandlers } from '../../src/routes.js';
import { LocalDiskStorage } from '../../src/media/storage.js';
import { SearchCache } from '../../src/search/search-cache.js';

const contract = loadContract();
const {
  t,
  users: { ada },
} = useServer({ users: { ada: 'all' } });

describe('API9 inventory', () => {
  it('serves exactly the bundled contract', async () => {
    expect((await raw(t, 'GET', '/openapi.json')).json).toEqual(contract);
  });

  it('has one handler per operation and none other', () => {
    const handlers = Object.keys(
      allHandlers(contract, {
        storage: new LocalDiskStorage('/nonexistent'),
        media: { uploadBytes: 1, quotaBytes: 1, unattachedHours: 1 },
        limits: { requestsPerMinutePerKey: 1, requestsPerMinutePerUser: 1, failedAuthPerMinutePerAddress: 1 },
        searchCache: new SearchCache(0),
        webhooks: { box: new SecretBox(randomBytes(32)), urls: { allowLocal: false } },
        countsCacheSeconds: 0,
        site: 'http://localhost',
        log: createLogger('silent'),
      }),
    ).sort();
    expect(handlers).toEqual(
      listOperations(contract)
        .filter((o) => o.access.kind !== 'mcp')
        .map((o) => o.operationId)
        .sort(),
    );
    expect(
      listOperations(contract)
        .filter((o) => o.access.kind === 'mcp')
        .map((o) => `${o.method} ${o.path}`),
    ).toEqual(['post /mcp']);
  });

  it('answers 405 for every method the contract does not list on a path', async () => {
    for (const [path, item] of Object.entries(contract.paths)) {
      const url = path.replace(/\{[^}]+\}/g, '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10');
      for (const method of HTTP_METHODS.filter((m) => !['head', 'options', 'trace'].includes(m) && !item[m])) {
        const res = await raw(t, method.toUpperCase(), url, {
          token: ada.token,
          body: method === 'get' || method === 'delete' ? undefined : {},
        });
        expect(res.status, `${method.toUpperCase()} ${path}`).toBe(405);
      }
    }
  });

  it('answers 404 for paths outside the contract', async () => {
    for (const path of [
      '/admin',
      '/users',
      '/internal/debug',
      '/projects/0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10/secrets',
      '/v2/projects',
    ]) {
      expect((await raw(t, 'GET', path, { token: ada.token })).status, path).toBe(404);
    }
  });
});
