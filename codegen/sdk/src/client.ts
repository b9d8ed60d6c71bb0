/**
 * The client behind every call: hey-api's fetch client, configured for one server and key, with
 * its request function wrapped for timeouts, retries and idempotency, and an error interceptor
 * that turns error answers into `ShipyardError`s.
 */
import { type Client, type ClientOptions, type Config, createClient } from './generated/client/index.js';
import { ShipyardError, ShipyardNetworkError, ShipyardTimeoutError } from './errors.js';
import { API_VERSION, IDEMPOTENT_CREATES, SDK_VERSION, TEXT_ANSWERS } from './meta.js';

/** Per-call settings, accepted by every operation beside its parameters (and by the client). */
export interface CallSettings {
  /** Milliseconds to wait for each attempt's answer (0 = no limit; at most 2147483647). */
  timeoutMs?: number;
  /** How many times a failed call may be sent again (0 = never). */
  maxRetries?: number;
}

declare module './generated/client/types.gen.js' {
  // Lets `timeoutMs` and `maxRetries` ride along with any operation's options and the client's config.
  interface Config<T extends ClientOptions = ClientOptions> extends CallSettings {}
}

export interface ShipyardOptions extends CallSettings {
  /** The server: its origin (`https://shipyard.example`) or its API root (`…/api/v1`). Required. */
  baseUrl: string;
  /**
   * A `shipyard_pat_…` key from Settings → Manage API keys. Sent only in the Authorization header.
   * `null` for a client without a key, for the public operations only (the feeds, the contract).
   */
  apiKey: string | null;
  /** The longest the client waits in total between attempts of one call, in milliseconds. */
  maxRetryWaitMs?: number;
  /** Appended to the SDK's User-Agent, e.g. `my-app/1.2`. */
  userAgent?: string;
  /** Another fetch implementation (a proxy agent, a test double). */
  fetch?: typeof fetch;
  /**
   * Called once per operation and client when the server says the operation is deprecated (its
   * `Deprecation` header). The default writes one `console.warn`; pass your own to log it
   * elsewhere, or `() => {}` to say nothing.
   */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** Called before each attempt is sent (a retry is an attempt of its own): for logs and metrics. */
  onRequest?: (event: RequestEvent) => void;
  /** Called after each attempt, with its answer's status, or `null` when none came (a timeout, a dropped connection). */
  onResponse?: (event: ResponseEvent) => void;
  /**
   * Writes one line per attempt sent and per answer (method, the operation's path, status, time,
   * request id) with `console.debug`, or to the function given. Never a header: the key does not appear.
   */
  debug?: boolean | ((line: string) => void);
}

/** An attempt about to be sent. */
export interface RequestEvent {
  /** The method and the operation's path, e.g. `GET /projects/{projectId}`. */
  operation: string;
  /** 1 for the first attempt of a call, 2 for its first retry, … */
  attempt: number;
}

/** An attempt's outcome. */
export interface ResponseEvent extends RequestEvent {
  /** The URL it was sent to (no headers: never the key). */
  url: string | undefined;
  /** The answer's status, or null when no answer came. */
  status: number | null;
  durationMs: number;
  /** The server's X-Request-Id: quote it when you report a problem. */
  requestId: string | undefined;
}

/** What a deprecated operation's answer said about it (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, `Link`). */
export interface DeprecationNotice {
  /** The method and the operation's path, e.g. `GET /platform/versions`. */
  operation: string;
  /** When it was deprecated, when the server said. */
  since?: Date;
  /** The earliest it may stop working, when the server said. */
  sunset?: Date;
  /** Where what to use instead is explained: its entry in the API's changelog. */
  link?: string;
}

const warnOnce = (notice: DeprecationNotice) =>
  console.warn(
    `Shipyard SDK: ${notice.operation} is deprecated${notice.since ? ` since ${notice.since.toISOString().slice(0, 10)}` : ''}` +
      `${notice.sunset ? ` and may stop working after ${notice.sunset.toISOString().slice(0, 10)}` : ''}.` +
      `${notice.link ? ` What to use instead: ${notice.link}` : ''}`,
  );

/** The notice a response carries, or undefined when it carries none. */
export function deprecationNotice(operation: string, response: Response): DeprecationNotice | undefined {
  const header = response.headers.get('deprecation');
  if (!header) return undefined;
  const seconds = /^@(-?\d+)$/.exec(header.trim())?.[1];
  const sunset = Date.parse(response.headers.get('sunset') ?? '');
  const target = /<([^>]*)>\s*;[^,]*\brel="?deprecation"?/i.exec(response.headers.get('link') ?? '')?.[1];
  let link: string | undefined;
  try {
    link = target === undefined ? undefined : new URL(target, response.url || undefined).href;
  } catch {
    link = target;
  }
  return {
    operation,
    ...(seconds !== undefined ? { since: new Date(Number(seconds) * 1000) } : {}),
    ...(Number.isFinite(sunset) ? { sunset: new Date(sunset) } : {}),
    ...(link !== undefined ? { link } : {}),
  };
}

export const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, maxRetryWaitMs: 60_000 } as const;

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Answers that say "not now" rather than "no": worth another try when the request is safe to repeat. */
const TRANSIENT = new Set([502, 503, 504]);
const IDEMPOTENCY_KEY = 'Idempotency-Key';
const KEY_PATTERN = /^shipyard_pat_[A-Za-z0-9]{38}$/;
const MAX_TIMER_MS = 2_147_483_647;

type Headerish = Config['headers'];
type RequestOptions = Parameters<Client['request']>[0];
type Attempt = { data?: unknown; error?: unknown; request?: Request; response?: Response };

/** Headers as a plain object (hey-api's generated functions spread them, which drops a Headers' entries). */
export function plainHeaders(headers: Headerish): Record<string, unknown> | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  return headers as Record<string, unknown>;
}

const headerValue = (headers: Headerish, name: string): string | undefined => {
  const found = Object.entries(plainHeaders(headers) ?? {}).find(
    ([k, v]) => k.toLowerCase() === name.toLowerCase() && v != null,
  );
  return found ? String(found[1]) : undefined;
};

/** A non-negative whole number of milliseconds (or retries) within what a timer can hold, or a TypeError. */
function setting(name: string, value: unknown, max = MAX_TIMER_MS): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new TypeError(`Shipyard SDK: ${name} must be a whole number from 0 to ${max} (got ${String(value)}).`);
  }
  return value;
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

function checkKey(apiKey: unknown): string | undefined {
  // Said on purpose: no key, for the public operations. Left out is a mistake, said below.
  if (apiKey === null) return undefined;
  // The value is never echoed: a wrong value may still be someone's secret.
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError(
      'Shipyard SDK: apiKey is missing; create a key under Settings → Manage API keys (or pass apiKey: null for the public feeds only).',
    );
  }
  if (!KEY_PATTERN.test(apiKey)) {
    throw new TypeError(
      'Shipyard SDK: apiKey is not a Shipyard key ("shipyard_pat_" and 38 letters and digits); copy it again from Settings → Manage API keys.',
    );
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

/** Exponential backoff with full jitter (at least 100 ms), for failures that name no wait. */
const backoffMs = (attempt: number) => 100 + Math.random() * Math.min(8_000, 500 * 2 ** attempt);

/**
 * Whether a failed attempt is worth sending again. An answer that says "not now" (429, 502-504)
 * or no answer at all, when the request is safe to repeat: an idempotent method, or a create
 * carrying an Idempotency-Key. A 429 is always safe: the server refuses it before doing anything.
 */
function worthRetrying(error: unknown, safe: boolean, hasKey: boolean): boolean {
  if (!(error instanceof ShipyardError)) return safe;
  if (error.status === 429) return true;
  if (TRANSIENT.has(error.status)) return safe;
  // The first attempt of the same create is still running on the server.
  return hasKey && error.is('idempotency-in-progress');
}

/** The wait before the next attempt: the server's Retry-After (plus jitter within what is left), or a backoff. */
function nextWait(error: unknown, attempt: number, left: number): number | undefined {
  const named = error instanceof ShipyardError && error.retryAfter !== undefined ? error.retryAfter * 1000 : undefined;
  const base = Math.max(named ?? 0, named === undefined ? backoffMs(attempt) : 100);
  if (base > left) return undefined;
  // Up to a tenth more, so that many clients refused together do not all come back at once.
  return named === undefined ? base : base + Math.random() * Math.min(base * 0.1, left - base);
}

/** What a failure to get an answer says, with the system's reason (ECONNREFUSED, ENOTFOUND…) when it has one. */
function networkError(error: unknown, where: { method: string; url: string; attempts: number }) {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const reason = [(error as Error)?.message ?? String(error), cause?.code ?? cause?.message].filter(Boolean).join(': ');
  return new ShipyardNetworkError(
    `Could not get an answer from ${where.method} ${where.url} (${reason}).`,
    where,
    error,
  );
}

/** The answer without the Request it was sent as: that holds the Authorization header. */
function answer(result: Attempt, style: string | undefined, error?: ShipyardError) {
  if (style === 'data') return error ? undefined : result.data;
  return error
    ? { data: undefined, error, response: result.response }
    : { data: result.data, response: result.response };
}

type Hooks = Required<Pick<ShipyardOptions, 'onDeprecation'>> & Pick<ShipyardOptions, 'onRequest' | 'onResponse'>;

/** The hooks a client calls: the integrator's, and debug lines through them when asked for. */
function hooksOf(options: ShipyardOptions): Hooks {
  for (const name of ['onDeprecation', 'onRequest', 'onResponse'] as const)
    if (options[name] !== undefined && typeof options[name] !== 'function')
      throw new TypeError(`Shipyard SDK: ${name} must be a function, such as () => {} to say nothing.`);
  const write =
    typeof options.debug === 'function'
      ? options.debug
      : options.debug
        ? (line: string) => console.debug(line)
        : undefined;
  if (!write)
    return {
      onDeprecation: options.onDeprecation ?? warnOnce,
      onRequest: options.onRequest,
      onResponse: options.onResponse,
    };
  return {
    onDeprecation: options.onDeprecation ?? warnOnce,
    onRequest: (e) => {
      write(`shipyard → ${e.operation} (attempt ${e.attempt})`);
      options.onRequest?.(e);
    },
    onResponse: (e) => {
      write(
        `shipyard ← ${e.status ?? 'no answer'} ${e.operation} in ${e.durationMs} ms${e.requestId ? ` (X-Request-Id ${e.requestId})` : ''}`,
      );
      options.onResponse?.(e);
    },
  };
}

/**
 * Sends one call, and again when it is safe and worth it (see worthRetrying), at most
 * `maxRetries` more times and never waiting more than `maxRetryWaitMs` in all. Sets an
 * Idempotency-Key on every create that accepts one unless the caller gave their own.
 */
function resilient(base: Client, maxRetryWaitMs: number, hooks: Hooks) {
  const noticed = new Set<string>();
  return async (options: RequestOptions) => {
    const config = base.getConfig();
    const method = options.method.toUpperCase();
    let headers = plainHeaders(options.headers);
    if (method === 'POST' && IDEMPOTENT_CREATES.has(options.url) && !headerValue(headers, IDEMPOTENCY_KEY)) {
      headers = { ...headers, [IDEMPOTENCY_KEY]: crypto.randomUUID() };
    }
    const hasKey = headerValue(headers, IDEMPOTENCY_KEY) !== undefined;
    const safe = IDEMPOTENT_METHODS.has(method) || hasKey;
    const timeoutMs = setting('timeoutMs', options.timeoutMs) ?? config.timeoutMs ?? DEFAULTS.timeoutMs;
    const maxRetries = setting('maxRetries', options.maxRetries, 100) ?? config.maxRetries ?? DEFAULTS.maxRetries;
    const throwOnError = options.throwOnError ?? config.throwOnError;
    const style = options.responseStyle ?? config.responseStyle;
    const callerSignal = options.signal ?? undefined;
    let waited = 0;

    for (let attempt = 1; ; attempt++) {
      // A timer of our own, stopped once the answer is read, so that a streamed body is not cut off later.
      const timeout = new AbortController();
      const timer = timeoutMs > 0 ? setTimeout(() => timeout.abort(), timeoutMs) : undefined;
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal;
      let result: Attempt;
      const operation = `${method} ${options.url}`;
      hooks.onRequest?.({ operation, attempt });
      const started = Date.now();
      try {
        result = (await base.request({
          ...options,
          // A text answer as text, as its type says, unless the caller asked for another reading.
          ...(options.parseAs === undefined && TEXT_ANSWERS.has(operation) ? { parseAs: 'text' as const } : {}),
          headers,
          signal,
          throwOnError: false,
          responseStyle: 'fields',
        })) as Attempt;
      } finally {
        clearTimeout(timer);
      }
      hooks.onResponse?.({
        operation,
        attempt,
        url: result.request?.url,
        status: result.response?.status ?? null,
        durationMs: Date.now() - started,
        requestId: result.response?.headers.get('x-request-id') ?? undefined,
      });
      if (result.response && !noticed.has(operation)) {
        const notice = deprecationNotice(operation, result.response);
        if (notice) {
          noticed.add(operation);
          hooks.onDeprecation(notice);
        }
      }
      if (result.error === undefined) return answer(result, style);

      let error: unknown = result.error;
      if (!(error instanceof ShipyardError)) {
        // The caller's own cancellation is theirs to handle: passed through as it is.
        if (callerSignal?.aborted) throw callerSignal.reason;
        // Nothing was sent (a body that cannot be serialised, a bad header): a mistake, not the network's.
        if (!result.request) throw error;
        const where = { method, url: result.request.url.replace(/[?#].*$/, ''), attempts: attempt };
        error = timeout.signal.aborted ? new ShipyardTimeoutError(where, timeoutMs) : networkError(error, where);
      }

      const wait =
        attempt <= maxRetries && worthRetrying(error, safe, hasKey)
          ? nextWait(error, attempt - 1, maxRetryWaitMs - waited)
          : undefined;
      if (wait !== undefined) {
        waited += wait;
        await sleep(wait, callerSignal);
        continue;
      }
      // No answer is never dressed up as a problem: it always throws.
      if (!(error instanceof ShipyardError) || throwOnError) throw error;
      return answer(result, style, error);
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
    ...(auth ? { auth } : {}),
    timeoutMs: setting('timeoutMs', options.timeoutMs) ?? DEFAULTS.timeoutMs,
    maxRetries: setting('maxRetries', options.maxRetries, 100) ?? DEFAULTS.maxRetries,
    ...(agent ? { headers: { 'User-Agent': agent } } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  base.interceptors.error.use(problemInterceptor);
  const request = resilient(
    base,
    setting('maxRetryWaitMs', options.maxRetryWaitMs) ?? DEFAULTS.maxRetryWaitMs,
    hooksOf(options),
  ) as Client['request'];
  const method =
    (name: string) =>
    (opts: Omit<RequestOptions, 'method'>): ReturnType<Client['request']> =>
      request({ ...opts, method: name } as RequestOptions);
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
    connect: method('CONNECT'),
    trace: method('TRACE'),
  } as Client;
}
