/**
 * The only reader of process.env. Everything else receives a Config.
 */
import { MAX_KEY_DAYS } from './kernel/limits.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { TelemetrySettings } from './telemetry/sdk.js';

export type Config = {
  /** TCP port of the HTTP server (PORT, default 3000). */
  port: number;
  /** Address to bind (HOST, default 0.0.0.0). */
  host: string;
  /** PostgreSQL URL (DATABASE_URL); when absent, the embedded database is used. */
  databaseUrl: string | undefined;
  /** The hot statements as named prepared statements (DATABASE_PREPARED_STATEMENTS: true, false, or
   *  auto, the default: undefined, found out at start whether the path to the database keeps them). */
  databasePreparedStatements: boolean | undefined;
  /** A direct connection to PostgreSQL, past any transaction pooler (DATABASE_DIRECT_URL, default
   *  DATABASE_URL): LISTEN, and the lock the migrations run under, need a session of their own. */
  databaseDirectUrl: string | undefined;
  /** A read replica (DATABASE_READ_URL, optional): the reads that may lag a moment go there. */
  databaseReadUrl: string | undefined;
  /** Apply pending migrations when the server or worker starts (MIGRATE_ON_START, default true);
   *  false: a deploy step runs `bin/shipyard migrate`, and a process that finds some pending stops. */
  migrateOnStart: boolean;
  /** Where the embedded database and other local data live (DATA_DIR, default ./.data). */
  dataDir: string;
  /** Where uploaded images are stored, content-addressed (DATA_DIR/media). */
  mediaDir: string;
  /** Largest image upload in bytes (UPLOAD_MAX_BYTES, default 5 MiB). */
  uploadMaxBytes: number;
  /** The most bytes of images one account may keep (MEDIA_QUOTA_BYTES, default 100 MiB). */
  mediaQuotaBytes: number;
  /** Hours an upload no post or profile ever showed is kept before it is removed (MEDIA_UNATTACHED_HOURS, 24; 0 keeps them). */
  mediaUnattachedHours: number;
  /**
   * Redis for shared rate-limit budgets across instances; in memory when absent. One server
   * (REDIS_URL), a master watched by Sentinel (REDIS_SENTINELS, host:port,… and
   * REDIS_SENTINEL_MASTER, default mymaster), or a Cluster (REDIS_CLUSTER_NODES, host:port,…);
   * REDIS_PASSWORD for the last two (REDIS_URL carries its own).
   */
  redis: RedisConfig | undefined;
  /** Requests per minute per API key (RATE_LIMIT_PER_MINUTE, default 300). */
  rateLimitPerMinute: number;
  /** Requests per minute per user, all their keys together (RATE_LIMIT_PER_USER_PER_MINUTE, default twice the per-key budget). */
  rateLimitPerUserPerMinute: number;
  /** Requests with a missing or bad key per minute per client address (FAILED_AUTH_PER_MINUTE, default 30). */
  failedAuthPerMinute: number;
  /** The reverse proxies in front whose X-Forwarded-For names the client (TRUST_PROXY): how many
   *  hops, or their addresses and subnets; none by default (the peer address is the client). */
  trustProxy: number | string[] | undefined;
  /** GitHub's REST API (GITHUB_API_URL, default https://api.github.com; tests use a local fake). */
  githubApiUrl: string;
  /** Optional token for a higher GitHub rate limit (GITHUB_TOKEN). Never logged. */
  githubToken: string | undefined;
  /** Sync linked GitHub accounts older than this, in minutes (GITHUB_SYNC_INTERVAL_MINUTES, default 360; 0 = off). */
  githubSyncIntervalMinutes: number;
  /** Seconds a looked-up API key is reused before it is read again (KEY_CACHE_SECONDS, default 10; 0 = off).
   *  A revocation, or an account disabled or deleted, empties every instance's cache at once (the
   *  database's notices); this only bounds how long an unchanged key is reused. */
  keyCacheSeconds: number;
  /** The longest a key may last, in days (KEY_MAX_DAYS, 1 to 366, default 366): on the web, in the CLI and through OAuth. */
  keyMaxDays: number;
  /** Days the security log keeps an entry (SECURITY_LOG_DAYS, default 90). */
  securityLogDays: number;
  /** Days without use after which the keys page offers to revoke a key (KEY_UNUSED_DAYS, default 30). */
  keyUnusedDays: number;
  /** Seconds a search page may be reused (SEARCH_CACHE_SECONDS, default 10; 0 = off). A page is dropped
   *  as soon as anything searchable changes, in any process; the bound only covers open jobs reaching their expiry. */
  searchCacheSeconds: number;
  /** Seconds the platform's counts (stats, popular tags and skills) are shared by every caller before they
   *  are taken again (COUNTS_CACHE_SECONDS, default 60; 0 = counted on every request). */
  countsCacheSeconds: number;
  /** Validate every response against the contract (VALIDATE_RESPONSES, default on; tests keep it on). */
  validateResponses: boolean;
  /** pino-style level for the request log (LOG_LEVEL: silent, error, info; default info). */
  logLevel: 'silent' | 'error' | 'info';
  /** Public base URL used in links (PUBLIC_URL, default http://localhost:PORT). */
  publicUrl: string;
  /** Browser origins besides PUBLIC_URL's that may call the MCP endpoint (MCP_ALLOWED_ORIGINS, comma-separated). */
  mcpAllowedOrigins: string[];
  /** Run the webhook worker in this process (WEBHOOK_WORKER, default true; false when `shipyard worker` runs apart). */
  webhookWorker: boolean;
  /** Development and tests only: webhooks may go to http URLs and to this machine or private networks
   *  (WEBHOOK_ALLOW_LOCAL_URLS, default false). */
  webhookAllowLocalUrls: boolean;
  /** The key that encrypts stored secrets such as webhook signing secrets (SECRET_KEY: 32 bytes as 64 hex
   *  characters). Without it, one is made in DATA_DIR/secret.key; every instance must share it. Never logged. */
  secretKey: Buffer | undefined;
  /** What OpenTelemetry does in this process (src/instrument.ts), or undefined when nothing. */
  telemetry: TelemetrySettings | undefined;
};

function intFrom(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number, got '${value}'`);
  return n;
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got '${value}'`);
  return n;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: a number of proxy hops, or a comma-separated list of proxy addresses, subnets
 * (CIDR) and the names loopback, linklocal, uniquelocal. Never "every address": then any client
 * could name its own address in X-Forwarded-For and escape the per-address limits.
 */
export function parseTrustProxy(value: string | undefined): number | string[] | undefined {
  const v = value?.trim();
  if (!v || v === 'false' || v === '0') return undefined;
  const refuse = (why: string) =>
    new Error(
      `TRUST_PROXY ${why}, got '${v}'. Give the number of proxies in front (1), or their addresses, subnets and names (loopback, linklocal, uniquelocal), comma-separated`,
    );
  if (v === 'true' || v === '*')
    throw refuse('may not trust every address (any client could then choose its own address)');
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (!Number.isSafeInteger(hops) || hops > 100) throw refuse('is not a sensible number of proxies');
    return hops;
  }
  const items = v.split(',').map((s) => s.trim());
  for (const item of items) {
    if (PROXY_NAMES.includes(item)) continue;
    const [addr, bits, extra] = item.split('/');
    const family = isIP(addr ?? '');
    const max = family === 4 ? 32 : 128;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (!family || !okBits || extra !== undefined)
      throw refuse(`names '${item}', which is not an address, a subnet or one of ${PROXY_NAMES.join(', ')}`);
  }
  return items;
}

/**
 * MCP_ALLOWED_ORIGINS: origins as a browser sends them (`https://app.example.com`,
 * `http://localhost:6274`), comma-separated; anything with a path, a query or no scheme is refused.
 */
function parseOrigins(value: string | undefined): string[] {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const url = URL.canParse(item) ? new URL(item) : undefined;
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, ''))
      throw new Error(
        `MCP_ALLOWED_ORIGINS must list origins such as https://app.example.com (scheme, host and port only), got '${item}'`,
      );
  }
  return items.map((item) => new URL(item).origin);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom('PORT', env.PORT, 3000);
  const level = env.LOG_LEVEL ?? 'info';
  if (level !== 'silent' && level !== 'error' && level !== 'info')
    throw new Error(`LOG_LEVEL must be silent, error or info, got '${level}'`);
  const { databaseUrl, publicUrl } = checkUrls(env);
  const budgets = requestBudgets(env);
  const prepared = env.DATABASE_PREPARED_STATEMENTS?.trim() || 'auto';
  if (prepared !== 'true' && prepared !== 'false' && prepared !== 'auto')
    throw new Error(`DATABASE_PREPARED_STATEMENTS must be true, false or auto, got '${prepared}'`);
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    databaseUrl,
    databasePreparedStatements: prepared === 'auto' ? undefined : prepared === 'true',
    databaseDirectUrl: postgresUrl('DATABASE_DIRECT_URL', env.DATABASE_DIRECT_URL, databaseUrl),
    databaseReadUrl: postgresUrl('DATABASE_READ_URL', env.DATABASE_READ_URL, databaseUrl),
    migrateOnStart: bool('MIGRATE_ON_START', env.MIGRATE_ON_START, true),
    dataDir: resolve(env.DATA_DIR ?? '.data'),
    mediaDir: resolve(env.DATA_DIR ?? '.data', 'media'),
    redis: redisConfig(env),
    ...budgets,
    failedAuthPerMinute: positiveInt('FAILED_AUTH_PER_MINUTE', env.FAILED_AUTH_PER_MINUTE, 30),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    githubApiUrl: (env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/$/, ''),
    githubToken: env.GITHUB_TOKEN || undefined,
    githubSyncIntervalMinutes: zeroOrPositive('GITHUB_SYNC_INTERVAL_MINUTES', env.GITHUB_SYNC_INTERVAL_MINUTES, 360),
    uploadMaxBytes: positiveInt('UPLOAD_MAX_BYTES', env.UPLOAD_MAX_BYTES, 5 * 1024 * 1024),
    mediaQuotaBytes: positiveInt('MEDIA_QUOTA_BYTES', env.MEDIA_QUOTA_BYTES, 100 * 1024 * 1024),
    mediaUnattachedHours: zeroOrPositive('MEDIA_UNATTACHED_HOURS', env.MEDIA_UNATTACHED_HOURS, 24),
    validateResponses: env.VALIDATE_RESPONSES !== 'false',
    keyCacheSeconds: zeroOrPositive('KEY_CACHE_SECONDS', env.KEY_CACHE_SECONDS, 10),
    keyMaxDays: keyMaxDays(env.KEY_MAX_DAYS),
    securityLogDays: positiveInt('SECURITY_LOG_DAYS', env.SECURITY_LOG_DAYS, 90),
    keyUnusedDays: positiveInt('KEY_UNUSED_DAYS', env.KEY_UNUSED_DAYS, 30),
    searchCacheSeconds: zeroOrPositive('SEARCH_CACHE_SECONDS', env.SEARCH_CACHE_SECONDS, 10),
    countsCacheSeconds: zeroOrPositive('COUNTS_CACHE_SECONDS', env.COUNTS_CACHE_SECONDS, 60),
    logLevel: level,
    publicUrl: (publicUrl ?? `http://localhost:${port}`).replace(/\/$/, ''),
    mcpAllowedOrigins: parseOrigins(env.MCP_ALLOWED_ORIGINS),
    webhookWorker: bool('WEBHOOK_WORKER', env.WEBHOOK_WORKER, true),
    webhookAllowLocalUrls: bool('WEBHOOK_ALLOW_LOCAL_URLS', env.WEBHOOK_ALLOW_LOCAL_URLS, false),
    secretKey: secretKey(env.SECRET_KEY),
    telemetry: telemetrySettings(env, { port }),
  };
}

/**
 * What OpenTelemetry does, read from the SDK's standard variables and METRICS_PORT
 * (docs/operations.md): traces when an OTLP endpoint is set and OTEL_TRACES_EXPORTER is not
 * `none`; metrics by OTLP when an endpoint is set and OTEL_METRICS_EXPORTER asks for `otlp` (its
 * default); Prometheus's exposition on METRICS_PORT (METRICS_HOST, default 127.0.0.1), or as
 * OTEL_METRICS_EXPORTER=prometheus and OTEL_EXPORTER_PROMETHEUS_* ask. OTEL_SDK_DISABLED
 * turns all of it off. Undefined: nothing at all is loaded. `checked` (loadConfig): a METRICS_PORT
 * that is no port, or the public one, is refused; the preload (src/instrument.ts) only reads.
 */
export function telemetrySettings(
  env: NodeJS.ProcessEnv = process.env,
  checked?: { port: number },
): TelemetrySettings | undefined {
  const publicPort = checked?.port ?? Number(env.PORT || 3000);
  /** A port the metrics may listen on: a port number, and not the public one. */
  const metricsPortFrom = (value: string) => {
    const port = Number(value);
    return /^\d+$/.test(value) && port > 0 && port <= 65535 && port !== publicPort ? port : undefined;
  };
  const metricsPort = env.METRICS_PORT?.trim() || undefined;
  let prometheus: TelemetrySettings['prometheus'];
  if (metricsPort !== undefined) {
    const port = metricsPortFrom(metricsPort);
    if (checked && port === undefined)
      throw new Error(
        `METRICS_PORT must be a port number other than PORT (${publicPort}): the metrics are never served on the public port; got '${metricsPort}'`,
      );
    if (port !== undefined) prometheus = { host: env.METRICS_HOST?.trim() || '127.0.0.1', port };
  }
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const list = (value: string | undefined) =>
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const metricExporters = list(env.OTEL_METRICS_EXPORTER);
  // The SDK's own way to ask for Prometheus, when METRICS_PORT does not.
  if (!prometheus && metricExporters.includes('prometheus')) {
    const port = metricsPortFrom(env.OTEL_EXPORTER_PROMETHEUS_PORT?.trim() || '9464');
    if (port !== undefined) prometheus = { host: env.OTEL_EXPORTER_PROMETHEUS_HOST?.trim() || '127.0.0.1', port };
  }
  const traceEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const metricEndpoint = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const traces = Boolean(traceEndpoint) && !list(env.OTEL_TRACES_EXPORTER).includes('none');
  const metricsByOtlp =
    Boolean(metricEndpoint) &&
    (metricExporters.length === 0 || (metricExporters.includes('otlp') && !metricExporters.includes('none')));
  const protocol = (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  const otlpMetrics = metricsByOtlp && (protocol === 'http/json' || protocol === 'grpc' ? protocol : 'http/protobuf');
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL?.trim() || 60_000);
  const metricExportIntervalMs = Number.isSafeInteger(interval) && interval > 0 ? interval : 60_000;
  return traces || otlpMetrics || prometheus ? { traces, otlpMetrics, metricExportIntervalMs, prometheus } : undefined;
}

function bool(name: string, value: string | undefined, fallback: boolean): boolean {
  const v = value?.trim();
  if (!v) return fallback;
  if (v !== 'true' && v !== 'false') throw new Error(`${name} must be true or false, got '${v}'`);
  return v === 'true';
}

/** SECRET_KEY: 32 random bytes as 64 hex characters (`openssl rand -hex 32`). Its value is never echoed. */
function secretKey(value: string | undefined): Buffer | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(v))
    throw new Error('SECRET_KEY must be 32 bytes as 64 hex characters (make one with: openssl rand -hex 32)');
  return Buffer.from(v, 'hex');
}

/** `0` turns the setting off; anything else must be a positive whole number. */
function keyMaxDays(value: string | undefined): number {
  const days = positiveInt('KEY_MAX_DAYS', value, MAX_KEY_DAYS);
  if (days > MAX_KEY_DAYS)
    throw new Error(
      `KEY_MAX_DAYS may lower the keys' longest lifetime, ${MAX_KEY_DAYS} days, not raise it; got '${value}'`,
    );
  return days;
}

function zeroOrPositive(name: string, value: string | undefined, fallback: number): number {
  return value === '0' ? 0 : positiveInt(name, value, fallback);
}

/** The URLs the service is given, each of the scheme it must have. */
function checkUrls(env: NodeJS.ProcessEnv): { databaseUrl: string | undefined; publicUrl: string | undefined } {
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (env.REDIS_URL && !/^rediss?:\/\//.test(env.REDIS_URL.trim())) throw new Error('REDIS_URL must be a redis:// URL');
  if (env.GITHUB_API_URL && !/^https?:\/\//.test(env.GITHUB_API_URL))
    throw new Error('GITHUB_API_URL must be an http(s) URL');
  const publicUrl = env.PUBLIC_URL?.trim() || undefined;
  if (publicUrl && !(/^https?:\/\//.test(publicUrl) && URL.canParse(publicUrl))) {
    throw new Error(`PUBLIC_URL must be an http(s) URL (the address people open), got '${publicUrl}'`);
  }
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new Error('DATABASE_URL must be a postgres:// URL');
  return { databaseUrl, publicUrl };
}

type Node = { host: string; port: number };
type RedisConfig =
  | { url: string }
  | { sentinels: Node[]; master: string; password?: string }
  | { cluster: Node[]; password?: string };

/** `host:port,host:port` as nodes. */
function nodes(name: string, value: string): Node[] {
  return value.split(',').map((item) => {
    const m = /^\s*([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\s*$/.exec(item);
    if (!m || Number(m[2]) > 65535)
      throw new Error(`${name} must list host:port pairs, comma-separated, got '${item.trim()}'`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
  });
}

/** One way to Redis at most: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES. */
function redisConfig(env: NodeJS.ProcessEnv): RedisConfig | undefined {
  const url = env.REDIS_URL?.trim() || undefined;
  const sentinels = env.REDIS_SENTINELS?.trim() || undefined;
  const cluster = env.REDIS_CLUSTER_NODES?.trim() || undefined;
  if ([url, sentinels, cluster].filter(Boolean).length > 1)
    throw new Error('set one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES');
  const password = env.REDIS_PASSWORD || undefined;
  if (url) return { url };
  if (sentinels)
    return {
      sentinels: nodes('REDIS_SENTINELS', sentinels),
      master: env.REDIS_SENTINEL_MASTER?.trim() || 'mymaster',
      ...(password ? { password } : {}),
    };
  if (cluster) return { cluster: nodes('REDIS_CLUSTER_NODES', cluster), ...(password ? { password } : {}) };
  return undefined;
}

/** A second PostgreSQL URL (a direct connection, a replica): only beside DATABASE_URL. */
function postgresUrl(name: string, value: string | undefined, databaseUrl: string | undefined): string | undefined {
  const url = value?.trim() || undefined;
  if (!url) return undefined;
  if (!databaseUrl)
    throw new Error(`${name} is set, but DATABASE_URL is not: it names a second way to the same PostgreSQL`);
  if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url)) throw new Error(`${name} must be a postgres:// URL`);
  return url;
}

/** How a process opens the database, as the configuration says: the server, the worker and the CLI alike. */
export function databaseSettings(config: Config) {
  return {
    databaseUrl: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    readUrl: config.databaseReadUrl,
    dataDir: config.dataDir,
    preparedStatements: config.databasePreparedStatements,
  };
}

/** A key's budget, and its user's, which holds their keys' budgets. */
function requestBudgets(env: NodeJS.ProcessEnv): Pick<Config, 'rateLimitPerMinute' | 'rateLimitPerUserPerMinute'> {
  const perKey = positiveInt('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 300);
  const perUser = positiveInt('RATE_LIMIT_PER_USER_PER_MINUTE', env.RATE_LIMIT_PER_USER_PER_MINUTE, 2 * perKey);
  if (perUser < perKey)
    throw new Error(
      `RATE_LIMIT_PER_USER_PER_MINUTE (${perUser}) must be at least RATE_LIMIT_PER_MINUTE (${perKey}): a user's budget holds their keys' budgets`,
    );
  return { rateLimitPerMinute: perKey, rateLimitPerUserPerMinute: perUser };
}
