/**
 * @shipyard/sdk — the TypeScript client for the Shipyard API, generated from its OpenAPI
 * contract (every operation, request and response type). One function per operation, named by
 * its operationId; each returns `{ data, error, response }`.
 */
import { createClient, type Client } from './generated/client/index.js';

export * from './generated/index.js';
export { createClient, createConfig, type Client, type Config } from './generated/client/index.js';

/**
 * A client for one Shipyard server and API key: `baseUrl` is the server's origin or its API
 * root (`https://shipyard.example` or `https://shipyard.example/api/v1`); `apiKey` is a
 * `shipyard_pat_…` key from Settings → Manage API keys. The key is sent in the Authorization
 * header only.
 */
export function shipyardClient(options: { baseUrl: string; apiKey: string; fetch?: typeof fetch }): Client {
  const root = options.baseUrl.replace(/\/+$/, '');
  const baseUrl = root.endsWith('/api/v1') ? root : `${root}/api/v1`;
  return createClient({ baseUrl, auth: options.apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });
}
