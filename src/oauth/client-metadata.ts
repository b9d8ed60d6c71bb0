/**
 * Client ID Metadata Documents (the MCP specification 2025-11-25; draft-ietf-oauth-client-id-
 * metadata-document): a client whose client_id is an https URL is described by the JSON document
 * at that URL. Fetching a URL a stranger names is a server-side request forgery waiting to happen,
 * so the fetch is held tight: https only, no credentials in the URL, a name that resolves to
 * public addresses only (the connection goes to the address that was checked, so a second
 * lookup cannot point it elsewhere), no redirects, 5 seconds, 5 KB, JSON. Documents are kept for
 * their Cache-Control max-age (1 to 60 minutes; 10 without one), a refusal for a minute, and at
 * most 1,000 of them.
 */
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { type ClientInfo, OAuthRefusal, redirectProblem } from './oauth.service.js';
import { allowedAddress } from '../kernel/public-address.js';

const MAX_BYTES = 5 * 1024;
const TIMEOUT_MS = 5_000;
const DEFAULT_TTL_MS = 10 * 60_000;
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 60 * 60_000;
const REFUSAL_TTL_MS = 60_000;
const MAX_ENTRIES = 1_000;

export type MetadataFetchPolicy = {
  /** Tests only: a document may be served from this machine, over https with this CA. */
  allowLoopback?: boolean;
  ca?: string;
};

type Entry = { until: number; client?: ClientInfo; refusal?: string };

export class ClientMetadataDocuments {
  readonly #cache = new Map<string, Entry>();
  constructor(private readonly policy: MetadataFetchPolicy = {}) {}

  /** The client the document at `url` describes, or an `invalid_client` refusal saying why not. */
  async client(url: string): Promise<ClientInfo> {
    const cached = this.#cache.get(url);
    if (cached && cached.until > Date.now()) {
      if (cached.client) return cached.client;
      throw new OAuthRefusal('invalid_client', cached.refusal!);
    }
    try {
      const { client, ttlMs } = await this.#fetch(url);
      this.#keep(url, { until: Date.now() + ttlMs, client });
      return client;
    } catch (err) {
      const refusal = `client_id ${url.slice(0, 200)}: ${err instanceof Error ? err.message : String(err)}`;
      this.#keep(url, { until: Date.now() + REFUSAL_TTL_MS, refusal });
      throw new OAuthRefusal('invalid_client', refusal);
    }
  }

  #keep(url: string, entry: Entry) {
    this.#cache.delete(url);
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(url, entry);
  }

  async #fetch(id: string): Promise<{ client: ClientInfo; ttlMs: number }> {
    const url = documentUrl(id);
    const address = await this.#publicAddress(url.hostname.replace(/^\[|\]$/g, ''));
    const { body, maxAge } = await get(url, address, this.policy.ca);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(body) as Record<string, unknown>;
    } catch {
      throw new Error('the document is not JSON');
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new Error('the document is not a JSON object');
    if (doc.client_id !== id) throw new Error('the document names another client_id');
    const auth = doc.token_endpoint_auth_method;
    if (auth !== undefined && auth !== 'none')
      throw new Error(
        `token_endpoint_auth_method ${String(auth).slice(0, 40)}: this server takes public clients (none) only`,
      );
    const uris = doc.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10)
      throw new Error('redirect_uris: give 1 to 10 URIs');
    for (const uri of uris) {
      const problem = typeof uri === 'string' ? redirectProblem(uri) : 'is not a string';
      if (problem) throw new Error(`redirect_uris: ${String(uri).slice(0, 100)} ${problem}`);
    }
    const name = typeof doc.client_name === 'string' && doc.client_name.trim() ? doc.client_name.trim() : url.host;
    if (name.length > 100 || /[\p{Cc}\p{Cf}]/u.test(name))
      throw new Error('client_name: one line of at most 100 characters');
    const ttlMs = maxAge === undefined ? DEFAULT_TTL_MS : Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, maxAge * 1000));
    return {
      client: {
        client_id: id,
        client_name: name,
        redirect_uris: uris as string[],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      ttlMs,
    };
  }

  /** The address to connect to: every address the name has must be public (or loopback, in tests). */
  async #publicAddress(host: string): Promise<{ address: string; family: number }> {
    try {
      return await allowedAddress(host, this.policy.allowLoopback ? 'loopback' : 'public');
    } catch (err) {
      if (err instanceof Error && err.message.includes('not a public address'))
        throw new Error('its host is not a public address; a metadata document must be on the public internet');
      throw err;
    }
  }
}

/** The client_id as a URL this server will fetch, or why not. */
function documentUrl(id: string): URL {
  if (id.length > 2000) throw new Error('longer than 2000 characters');
  if (!URL.canParse(id)) throw new Error('not a URL');
  const url = new URL(id);
  if (url.protocol !== 'https:') throw new Error('a metadata document is fetched over https only');
  if (url.username || url.password) throw new Error('credentials in the URL');
  if (url.hash) throw new Error('a fragment');
  if (url.pathname === '/') throw new Error('a metadata document URL has a path');
  return url;
}

/** GET over https to the checked address: no redirects, bounded in time and size. */
function get(url: URL, to: { address: string; family: number }, ca: string | undefined) {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [to]);
    else callback(null, to.address, to.family);
  };
  return new Promise<{ body: string; maxAge?: number }>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup: pinned,
        timeout: TIMEOUT_MS,
        ...(ca ? { ca } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`the document answered ${res.statusCode} (redirects are not followed)`));
        }
        if (!/^application\/([\w.+-]*\+)?json\b/i.test(res.headers['content-type'] ?? '')) {
          res.destroy();
          return reject(new Error('the document is not application/json'));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BYTES) {
            res.destroy();
            return reject(new Error(`the document is larger than ${MAX_BYTES} bytes`));
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const maxAge = /max-age=(\d+)/.exec(res.headers['cache-control'] ?? '')?.[1];
          resolve({ body: Buffer.concat(chunks).toString('utf8'), maxAge: maxAge ? Number(maxAge) : undefined });
        });
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(
      () => req.destroy(new Error(`no document within ${TIMEOUT_MS / 1000} seconds`)),
      TIMEOUT_MS,
    );
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no document within ${TIMEOUT_MS / 1000} seconds`)));
    req.on('error', (err) => reject(new Error(`could not fetch it (${err.message})`)));
    req.end();
  });
}
