/**
 * The client behind every call: hey-api's fetch client, configured for one server and key, with
 * its request function wrapped for timeouts, retries and idempotency, and an error interceptor
 * that turns problem responses into `ShipyardError`s.
 */
import { type Client, type ClientOptions, type Config, createClient } from './generated/client/index.js';
import { ShipyardError, ShipyardNetworkError, ShipyardTimeoutError } from './errors.js';
import { API_VERSION, IDEMPOTENT_CREATES, SDK_VERSION } from './meta.js';

/** Per-call settings, accepted by every operation beside its parameters. */
export interface CallSettings {
  /** Milliseconds to wait for each attempt's answer (0 = no limit). */
  timeoutMs?: number;
  /** How many times a failed call may be sent again (0 = never). */
  maxRetries?: number;
}

declare module './generated/client/types.gen.js' {
  // Lets `timeoutMs` and `maxRetries` ride along with any operation's options.
  interface Config<T extends ClientOptions = ClientOptions> extends CallSettings {}
}

export interface ShipyardOptions extends CallSettings {
  /** The server: its origin (`https://shipyard.example`) or its API root (`…/api/v1`). Required. */
  baseUrl: string;
  /** A `shipyard_pat_…` key from Settings → Manage API keys. Sent only in the Authorization header. */
  apiKey: string;
  /** The longest the client waits in total between attempts of one call, in milliseconds. */
  maxRetryWaitMs?: number;
  /** Appended to the SDK's User-Agent, e.g. `my-app/1.2`. */
  userAgent?: string;
  /** Another fetch implementation (a proxy agent, a test double). */
  fetch?: typeof fetch;
}

export const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, maxRetryWaitMs: 60_000 } as const;

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const IDEMPOTENCY_KEY = 'Idempotency-Key';

type Headerish = Config['headers'];

function headerValue(headers: Headerish, name: string): string | undefined {
  if (!headers) return undefined;
  const entries =
    headers instanceof Headers ? [...headers.entries()] : Array.isArray(headers) ? headers : Object.entries(headers);
  const found = entries.find(([k, v]) => k.toLowerCase() === name.toLowerCase() && v != null);
  return found ? String(found[1]) : undefined;
}

function withHeader(headers: Headerish, name: string, value: string): Headerish {
  if (headers instanceof Headers) {
    const copy = new Headers(headers);
    copy.set(name, value);
    return copy;
  }
  if (Array.isArray(headers)) return [...headers, [name, value]];
  return { ...headers, [name]: value };
}

/** The absolute API root for `baseUrl`, or a clear error. */
function apiRoot(baseUrl: unknown): string {
  let url: URL;
  try {
    url = new URL(String(baseUrl));
  } catch {
    throw new TypeError(
      `Shipyard SDK: baseUrl must be the server's absolute URL, such as "https://shipyard.example" (got ${
        baseUrl === undefined ? 'nothing' : JSON.stringify(String(baseUrl))
      }).`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`Shipyard SDK: baseUrl must be an http(s) URL (got ${url.protocol}).`);
  }
  const root = url.href.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return root.endsWith('/api/v1') ? root : `${root}/api/v1`;
}

function checkKey(apiKey: unknown): string {
  // The value is never echoed: a wrong value may still be someone's secret.
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError('Shipyard SDK: apiKey is missing; create a key under Settings → Manage API keys.');
  }
  if (!apiKey.startsWith('shipyard_pat_')) {
    throw new TypeError('Shipyard SDK: apiKey does not look like a Shipyard key (they start with "shipyard_pat_").');
  }
  return apiKey;
}

function userAgent(extra?: string): string | undefined {
  // Browsers set their own User-Agent; sending one there would only trigger a CORS preflight.
  if (typeof (globalThis as { document?: unknown }).document !== 'undefined') return undefined;
  const runtime = (globalThis as { process?: { version?: string } }).process?.version;
  const base = `shipyard-sdk-typescript/${SDK_VERSION} (api ${API_VERSION}${runtime ? `; node ${runtime}` : ''})`;
  return extra ? `${base} ${extra}` : base;
}

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });

/** Exponential backoff with full jitter, for failures that name no wait. */
const backoffMs = (attempt: number) => Math.random() * Math.min(8_000, 500 * 2 ** attempt);
/** The server's wait, plus up to a tenth more so that many clients do not come back at once. */
const serverWaitMs = (seconds: number) => seconds * 1000 * (1 + Math.random() * 0.1);

type Attempt = { data?: unknown; error?: unknown; request?: Request; response?: Response };

/** Why a call is worth sending again, or undefined when it is not. */
function retryReason(error: unknown, safe: boolean, hasKey: boolean): 'network' | 'server' | undefined {
  if (!safe) return undefined;
  if (error instanceof ShipyardError) {
    if (error.status === 429 || error.status === 503) return 'server';
    // The first attempt of the same create is still running on the server.
    if (hasKey && error.is('idempotency-in-progress')) return 'server';
    return undefined;
  }
  return 'network';
}

function describe(request: Request | undefined, fallbackUrl: string, method: string) {
  const url = request ? request.url.replace(/[?#].*$/, '') : fallbackUrl;
  return { method: request?.method ?? method, url };
}

/**
 * Sends one call, again when it is safe and worth it: 429 and 503 after their `Retry-After`,
 * and a lost connection or timeout, for idempotent methods and for creates carrying an
 * `Idempotency-Key` (set on every create that accepts one unless the caller gave their own).
 */
function resilient(base: Client, settings: Required<CallSettings> & { maxRetryWaitMs: number }) {
  return async (options: Parameters<Client['request']>[0]) => {
    const method = options.method.toUpperCase();
    let headers = options.headers;
    if (method === 'POST' && IDEMPOTENT_CREATES.has(options.url) && !headerValue(headers, IDEMPOTENCY_KEY)) {
      headers = withHeader(headers, IDEMPOTENCY_KEY, crypto.randomUUID());
    }
    const hasKey = headerValue(headers, IDEMPOTENCY_KEY) !== undefined;
    const safe = IDEMPOTENT_METHODS.has(method) || hasKey;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
    const maxRetries = options.maxRetries ?? settings.maxRetries;
    const callerSignal = options.signal ?? undefined;
    let waited = 0;

    for (let attempt = 1; ; attempt++) {
      const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
      const signal = callerSignal && timeout ? AbortSignal.any([callerSignal, timeout]) : (callerSignal ?? timeout);
      const result = (await base.request({ ...options, headers, signal, throwOnError: false })) as Attempt;
      if (result.error === undefined) return result;

      let error: unknown = result.error;
      if (!(error instanceof ShipyardError)) {
        // The caller's own cancellation is theirs to handle: passed through as it is.
        if (callerSignal?.aborted) throw callerSignal.reason;
        const where = { ...describe(result.request, options.url, method), attempts: attempt };
        error = timeout?.aborted
          ? new ShipyardTimeoutError(where, timeoutMs)
          : new ShipyardNetworkError(
              `Could not get an answer from ${where.method} ${where.url}: ${(error as Error)?.message ?? String(error)}`,
              where,
              error,
            );
      }

      const reason = attempt <= maxRetries ? retryReason(error, safe, hasKey) : undefined;
      const wait =
        reason === 'server' && (error as ShipyardError).retryAfter !== undefined
          ? serverWaitMs((error as ShipyardError).retryAfter as number)
          : backoffMs(attempt - 1);
      if (reason && waited + wait <= settings.maxRetryWaitMs) {
        waited += wait;
        await sleep(wait, callerSignal);
        continue;
      }
      // No answer is never dressed up as a problem: it always throws.
      if (!(error instanceof ShipyardError) || options.throwOnError) throw error;
      return { ...result, error };
    }
  };
}

/** Turns an error answer into a ShipyardError; leaves everything else for the retry loop to judge. */
function problemInterceptor(error: unknown, response: Response | undefined): unknown {
  if (response && !response.ok && !(error instanceof Error)) return new ShipyardError(error, response);
  return error;
}

/** A hey-api client for one server and key, with the SDK's errors, retries, timeouts and User-Agent. */
export function createShipyardClient(options: ShipyardOptions): Client {
  const baseUrl = apiRoot(options?.baseUrl);
  const auth = checkKey(options.apiKey);
  const agent = userAgent(options.userAgent);
  const base = createClient({
    baseUrl,
    auth,
    ...(agent ? { headers: { 'User-Agent': agent } } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  base.interceptors.error.use(problemInterceptor);
  const request = resilient(base, {
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULTS.maxRetryWaitMs,
  }) as Client['request'];
  const method =
    (name: string) =>
    (opts: Omit<Parameters<Client['request']>[0], 'method'>): ReturnType<Client['request']> =>
      request({ ...opts, method: name } as Parameters<Client['request']>[0]);
  return {
    ...base,
    request,
    get: method('GET'),
    post: method('POST'),
    put: method('PUT'),
    patch: method('PATCH'),
    delete: method('DELETE'),
    head: method('HEAD'),
    options: method('OPTIONS'),
  } as Client;
}
