/**
 * A real server on a real database for each test file: PostgreSQL when DATABASE_URL is set
 * (CI), otherwise the embedded PGlite in memory. Nothing is mocked; the tests talk HTTP to a
 * listening server, mostly through the generated SDK.
 */
import { afterAll, beforeAll } from 'vitest';
import { createServer as netServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../src/db/database.js';
import { createApp, type AppDeps } from '../src/app.js';
import { passwordProblems } from '../src/users/password-policy.js';
import type { Counters, RedisLink } from '../src/budgets/counters.js';
import type { Logger } from '../src/kernel/logger.js';
import { loadContract, type OpenApiDocument } from '../src/kernel/contract.js';
import { headerChecker } from './declared-headers.js';
import { problemCodeFault } from './problem-codes.js';
import { httpServer } from '../src/http/client-errors.js';
import type { KeyCache } from '../src/keys/key-cache.js';
import type { KeyUse } from '../src/keys/key-use.js';
import { hashToken } from '../src/keys/tokens.js';
import { LocalDiskStorage, type MediaStorage } from '../src/media/storage.js';
import { createLogger } from '../src/http/log.js';
import { createUser } from '../src/users/users.service.js';
import { startPasswordThread } from '../src/users/password-thread.js';
import { createKey } from '../src/keys/keys.service.js';
import type { User } from '../src/users/user.entity.js';
import { linkGithub, recordProof } from '../src/github/github.proof.js';
import { GithubAccount } from '../src/github/github.entity.js';
import { accountId } from './fake-github.js';
import { createClient, type Client } from '../codegen/generated/api/client/index.js';
import { SCOPE_IDS, type ScopeId } from '../src/kernel/scopes.js';
import { SecretBox } from '../src/webhooks/secrets.js';
import type { Resolve } from '../src/kernel/public-address.js';
import {
  type RetryPolicy,
  startWebhookWorker,
  type WebhookWorker,
  type WorkerOptions,
} from '../src/webhooks/worker.js';

/** Small, so the 413 is cheap to reach. */
export const UPLOAD_MAX_BYTES = 256 * 1024;

export type TestServer = {
  baseUrl: string;
  apiUrl: string;
  db: Database;
  storage: MediaStorage;
  /** The server's key cache, to see whether a key is cached before attacking its revocation. */
  keyCache: KeyCache;
  /** Where the server notes each key's use; `flush()` writes it now instead of within 2 s. */
  keyUse: KeyUse;
  close: () => Promise<void>;
};

export type ServerOptions = {
  /**
   * Webhooks: `worker` runs the webhook worker beside the server (polling every half second);
   * `allowLocal` lets webhooks go to http and loopback URLs (the operator's development setting);
   * `retry` shortens the back-off; `secretKey` is shared by instances on one database.
   */
  webhooks?: {
    worker?: boolean;
    allowLocal?: boolean;
    retry?: Partial<RetryPolicy>;
    secretKey?: Buffer;
    /** How webhook hosts are resolved (test/fake-dns.ts), instead of the system's resolver. */
    resolve?: Resolve;
  } & Pick<WorkerOptions, 'expireSeconds' | 'superviseSeconds' | 'attemptTimeoutMs'>;
  /** Another database than DATABASE_URL's (a fault test's own cluster), shared by the instances given it. */
  databaseUrl?: string;
  /** DATABASE_DIRECT_URL, DATABASE_READ_URL and DATABASE_PREPARED_STATEMENTS (auto when undefined), beside databaseUrl. */
  directUrl?: string;
  readUrl?: string;
  preparedStatements?: boolean;
  contract?: OpenApiDocument;
  rateLimitPerMinute?: number;
  /** Where the service's log goes (every line, the access log included), instead of stderr. */
  logTo?: NodeJS.WritableStream;
  /** A request-budget window shorter than a minute, to see a refused client come back. */
  rateLimitWindowMs?: number;
  failedAuthPerMinute?: number;
  requestTimeoutMs?: number;
  keyCacheSeconds?: number;
  signInAttemptsPer15Minutes?: number;
  githubApiUrl?: string;
  trustProxy?: number | string[];
  countsCacheSeconds?: number;
  publicUrl?: string;
  /** The longest a key may last (KEY_MAX_DAYS). */
  keyMaxDays?: number;
  /** Client metadata documents may be fetched from this machine, over https with this CA. */
  oauthClientMetadata?: { allowLoopback?: boolean; ca?: string };
  /** PUBLIC_URL http://localhost:<the port it listens on>, as `make run` sets it (OAuth's issuer is that origin). */
  publicUrlAtItsPort?: boolean;
  mcpAllowedOrigins?: string[];
  /** The bytes of images one account may keep. */
  mediaQuotaBytes?: number;
  /** How many password checks may wait for the password thread (0: every sign-up finds it busy). */
  passwordChecksWaiting?: number;
};

/** The app, or (when it cannot be made: a contract a test bent too far) the thread stopped and the error thrown. */
function tryOrStop<T>(thread: { stop: () => Promise<void> }, server: Server, make: () => T): T {
  try {
    return make();
  } catch (err) {
    void thread.stop();
    server.close();
    throw err;
  }
}

/** Budgets far above what a test sends, unless a test asks for a small one. */
export const TEST_RATE_LIMIT = 100_000;

export async function startServer(opts: ServerOptions = {}): Promise<TestServer> {
  const db = await openDatabase({
    databaseUrl: opts.databaseUrl ?? process.env.DATABASE_URL,
    directUrl: opts.directUrl,
    readUrl: opts.readUrl,
    preparedStatements: opts.preparedStatements,
    dataDir: '',
    inMemory: true,
  });
  const log = createLogger(opts.logTo || process.env.TEST_LOG === '1' ? 'info' : 'error', opts.logTo);
  const mediaDir = mkdtempSync(join(tmpdir(), 'shipyard-media-'));
  const storage = new LocalDiskStorage(mediaDir);
  // The password policy on its own thread, as the server runs it.
  const passwords = startPasswordThread({ maxWaiting: opts.passwordChecksWaiting });
  const webhooks = {
    box: new SecretBox(opts.webhooks?.secretKey ?? randomBytes(32)),
    urls: { allowLocal: opts.webhooks?.allowLocal ?? false, resolve: opts.webhooks?.resolve },
  };
  let app!: ReturnType<typeof createApp>;
  let headers!: ReturnType<typeof headerChecker>;
  const server: Server = await new Promise((resolve) => {
    const s = httpServer((req, res) => {
      res.on('finish', () => headers.check(req, res));
      app(req, res);
    }).listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const publicUrl = opts.publicUrlAtItsPort ? `http://localhost:${port}` : opts.publicUrl;
  app = tryOrStop(passwords, server, () =>
    createApp({
      orm: db.orm,
      config: {
        validateResponses: true,
        logLevel: 'error',
        uploadMaxBytes: UPLOAD_MAX_BYTES,
        mediaQuotaBytes: opts.mediaQuotaBytes,
        mediaDir,
        rateLimitPerMinute: opts.rateLimitPerMinute ?? TEST_RATE_LIMIT,
        rateLimitWindowMs: opts.rateLimitWindowMs,
        failedAuthPerMinute: opts.failedAuthPerMinute ?? TEST_RATE_LIMIT,
        requestTimeoutMs: opts.requestTimeoutMs,
        keyCacheSeconds: opts.keyCacheSeconds,
        signInAttemptsPer15Minutes: opts.signInAttemptsPer15Minutes ?? TEST_RATE_LIMIT,
        trustProxy: opts.trustProxy,
        // Counted on every request unless a test asks for the shared counts: a test sees its own writes.
        countsCacheSeconds: opts.countsCacheSeconds ?? 0,
        // Nothing leaves loopback: without a fake, GitHub is a closed local port.
        githubApiUrl: opts.githubApiUrl ?? 'http://127.0.0.1:9',
        publicUrl,
        mcpAllowedOrigins: opts.mcpAllowedOrigins,
        oauthRegistrationsPerHour: TEST_RATE_LIMIT,
        oauthClientMetadata: opts.oauthClientMetadata,
        keyMaxDays: opts.keyMaxDays,
        databaseReadUrl: opts.readUrl,
      },
      log,
      storage,
      changes: db.changes,
      contract: opts.contract,
      checkPassword: passwords.check,
      webhooks,
    }),
  );
  headers = headerChecker(opts.contract ?? loadContract());
  const baseUrl = `http://127.0.0.1:${port}`;
  const worker: WebhookWorker | undefined = opts.webhooks?.worker
    ? await startWebhookWorker({
        orm: db.orm,
        changes: db.changes,
        log,
        settings: webhooks,
        apiUrl: `${publicUrl ?? baseUrl}/api/v1`,
        retry: opts.webhooks.retry,
        pollSeconds: 0.5,
        expireSeconds: opts.webhooks.expireSeconds,
        superviseSeconds: opts.webhooks.superviseSeconds,
        attemptTimeoutMs: opts.webhooks.attemptTimeoutMs,
      })
    : undefined;
  return {
    baseUrl,
    apiUrl: `${baseUrl}/api/v1`,
    db,
    storage,
    keyCache: app.locals.keyCache as KeyCache,
    keyUse: app.locals.keyUse as KeyUse,
    close: async () => {
      await worker?.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      (app.locals.keyCache as KeyCache).close();
      await (app.locals.keyUse as KeyUse).close();
      await Promise.all([db.close(), passwords.stop()]);
      rmSync(mediaDir, { recursive: true, force: true });
      if (headers.violations.size)
        throw new Error(`responses sent undeclared headers:\n  ${[...headers.violations].join('\n  ')}`);
    },
  };
}

/**
 * Stands for an object made later, in a beforeAll: reading it before then is a mistake in the
 * test, said as such. Property reads, spreads and `in` go to the object once it is there.
 */
function later<T extends object>(what: string): { proxy: T; set: (value: T) => void } {
  let value: T | undefined;
  const real = (): T => {
    if (!value) throw new Error(`${what} is read before the beforeAll that makes it ran`);
    return value;
  };
  const proxy = new Proxy({} as T, {
    get: (_, key) => Reflect.get(real(), key),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      return d && { ...d, configurable: true };
    },
  });
  return { proxy, set: (v) => (value = v) };
}

/**
 * The test file's server: started before its first test, closed after its last, with a user
 * and a key for each name in `users` (their scopes, `'all'` for all nine; or `{ admin: true }`). What it returns stands
 * for the server and the users from then on, so a file reads `t.apiUrl` and `users.ada.token`
 * without a `let` and a hook of its own.
 *
 *   const { t, users } = useServer({ users: { ada: 'all', eve: ['profile.read'] } });
 */
type UserWanted = readonly ScopeId[] | 'all' | { scopes?: readonly ScopeId[] | 'all'; admin?: boolean };
const isScopeList = (want: UserWanted): want is readonly ScopeId[] => Array.isArray(want);

export function useServer<U extends string = never>(
  opts: ServerOptions & { users?: Record<U, UserWanted> } = {},
): { t: TestServer; users: Record<U, TestUser> } {
  const { users: wanted, ...serverOpts } = opts;
  const server = later<TestServer>('the test server');
  const names = Object.keys(wanted ?? {}) as U[];
  const made = Object.fromEntries(names.map((name) => [name, later<TestUser>(`user ${name}`)])) as Record<
    U,
    ReturnType<typeof later<TestUser>>
  >;
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startServer(serverOpts);
    server.set(started);
    for (const name of names) {
      const want: UserWanted = wanted![name];
      const { scopes = 'all', admin = false } =
        want === 'all' || isScopeList(want)
          ? { scopes: want }
          : (want as { scopes?: readonly ScopeId[] | 'all'; admin?: boolean });
      made[name].set(await userWithKey(started, scopes === 'all' ? SCOPE_IDS : scopes, { admin }));
    }
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    t: server.proxy,
    users: Object.fromEntries(names.map((name) => [name, made[name].proxy])) as Record<U, TestUser>,
  };
}

/**
 * Uses the key until the server has cached it (once its cache hears the database's notices):
 * for up to 10 seconds, as a loaded machine's embedded database may take that long to start
 * listening.
 */
export async function waitForCache(t: Pick<TestServer, 'apiUrl' | 'keyCache'>, token: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${t.apiUrl}/platform/versions`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200 && res.status !== 403) throw new Error(`the key is not usable: ${res.status}`);
    if (t.keyCache.get(hashToken(token))) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the key was never cached');
}

/** The promise under test: a revoked key is refused within one second. The last answer, 401 or not. */
export const refusedWithinASecond = (t: Pick<TestServer, 'apiUrl'>, token: string, path = '/platform/versions') =>
  answeredWithinASecond(t, token, path, 401);

/** A key whose account is enabled again is taken within one second. The last answer, 200 or not. */
export const acceptedWithinASecond = (t: Pick<TestServer, 'apiUrl'>, token: string, path = '/platform/versions') =>
  answeredWithinASecond(t, token, path, 200);

async function answeredWithinASecond(t: Pick<TestServer, 'apiUrl'>, token: string, path: string, status: number) {
  const until = Date.now() + 1000;
  let res = await raw(t, 'GET', path, { token });
  while (res.status !== status && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    res = await raw(t, 'GET', path, { token });
  }
  return res;
}

/**
 * A database of a test's own: on PostgreSQL a new one beside DATABASE_URL's (dropped by `drop`);
 * on the embedded default `databaseUrl` is undefined, as every embedded server has its own anyway.
 * For what must not share tables with the file's other servers (a second webhook worker's queue).
 */
export async function databaseOfItsOwn(prefix: string): Promise<{ databaseUrl?: string; drop: () => Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) return { drop: async () => {} };
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  await run(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return { databaseUrl: u.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

export const uniqueName = (prefix = 'u') => `${prefix}-${randomBytes(5).toString('hex')}`;

export type TestUser = { user: User; token: string; client: Client };

/** A user with one key holding `scopes` (default: all nine). */
export async function userWithKey(
  t: TestServer,
  scopes: readonly ScopeId[] = SCOPE_IDS,
  opts: { admin?: boolean } = {},
): Promise<TestUser> {
  const em = t.db.orm.em.fork();
  const username = uniqueName();
  const user = await createUser(em, { username, email: `${username}@example.test`, admin: opts.admin ?? false });
  const { token } = await createKey(em, { userId: user.id, name: 'test', scopes: [...scopes], expiresInDays: 30 });
  return { user, token, client: sdkClient(t, token) };
}

/**
 * A fixture for tests about what a GitHub login feeds (insight, radar), not about its proof:
 * the login linked and marked proven as verifyGithub would. test/github.test.ts proves logins
 * through the fake GitHub instead. The proof is for the fake GitHub's account of that login
 * (test/fake-github.ts).
 */
export async function linkProvenGithub(t: Pick<TestServer, 'db'>, userId: string, login: string) {
  const em = t.db.orm.em.fork();
  const account = await linkGithub(em, userId, login);
  await em.transactional((tem) => recordProof(tem, account.id, accountId({ login })));
  return em.fork().findOneOrFail(GithubAccount, { id: account.id });
}

export async function keyFor(t: TestServer, userId: string, scopes: readonly ScopeId[]): Promise<string> {
  return (await createKey(t.db.orm.em.fork(), { userId, name: 'extra', scopes: [...scopes], expiresInDays: 30 })).token;
}

export function sdkClient(t: TestServer, token: string): Client {
  return createClient({ baseUrl: t.apiUrl, auth: token });
}

/** Plain fetch for the cases the SDK cannot express (raw headers, bad JSON). */
/** A multipart/form-data body with one file field. */
export function fileForm(
  bytes: Buffer,
  filename = 'image.png',
  field = 'file',
  type = 'application/octet-stream',
): FormData {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type }), filename);
  return form;
}

export async function raw(
  t: Pick<TestServer, 'apiUrl'>,
  method: string,
  path: string,
  init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  let form: FormData | undefined;
  if (init.body instanceof FormData) form = init.body;
  else if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${t.apiUrl}${path}`, { method, headers, body: form ?? body });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (res.headers.get('content-type')?.startsWith('application/problem+json')) {
    const fault = problemCodeFault(json ?? {});
    if (fault) throw new Error(`${method} ${path} answered ${res.status}: ${fault}`);
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** One MCP tools/call as plain JSON-RPC over HTTP (stateless: no initialize needed). */
export async function mcpCall(
  t: Pick<TestServer, 'apiUrl'>,
  token: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.apiUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, json: await res.json() };
}

/**
 * The ports the system hands out for outgoing connections (and for `listen(0)`): a port chosen
 * below them cannot be taken by one of the many connections the tests open while the process
 * it is for starts, or while a stopped server is down before it starts again on it.
 */
const ephemeralFrom = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();

/**
 * The environment of a server a test starts as its own process: this one's, with its port on
 * loopback, its data directory, the access log on and no GitHub schedule.
 */
export function ownProcessEnv(port: number, dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    GITHUB_SYNC_INTERVAL_MINUTES: '0',
  };
}

/** A port nothing listens on now, for a server this test starts as its own process. */
export async function freePort(): Promise<number> {
  // Where the system hands out nearly every port, any free one will do.
  const below = ephemeralFrom - 20_000 >= 1000;
  for (;;) {
    // Chosen at random, so that test files running at once do not pick the same one.
    const port = below ? 20_000 + Math.floor(Math.random() * (ephemeralFrom - 20_000)) : 0;
    const s = netServer();
    const bound = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (!bound) continue;
    const { port: got } = s.address() as AddressInfo;
    await new Promise((r) => s.close(r));
    return got;
  }
}

/** Another instance of the service on a test server's database, as a second process would be: what a test drives and closes. */
export type Beside = {
  /** The instance's origin (`http://127.0.0.1:port`). */
  url: string;
  counters: Counters;
  close: () => Promise<void>;
};

/**
 * Another instance beside `t` (its database and storage), with its own Redis link and settings
 * over a small default: these tests sign nobody up, so the password policy runs on this thread.
 */
export async function instanceBeside(
  t: Pick<TestServer, 'db' | 'storage'>,
  opts: { redis?: RedisLink; log?: Logger; config?: Partial<AppDeps['config']> } = {},
): Promise<Beside> {
  const app = createApp({
    checkPassword: passwordProblems,
    orm: t.db.orm,
    log: opts.log ?? createLogger('silent'),
    redis: opts.redis,
    storage: t.storage,
    config: {
      validateResponses: true,
      logLevel: 'silent',
      uploadMaxBytes: UPLOAD_MAX_BYTES,
      mediaDir: mkdtempSync(join(tmpdir(), 'sy-')),
      rateLimitPerMinute: TEST_RATE_LIMIT,
      failedAuthPerMinute: 1000,
      ...opts.config,
    },
  });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  const counters = app.locals.counters as Counters;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counters,
    close: async () => {
      counters.close();
      (app.locals.keyCache as KeyCache).close();
      await (app.locals.keyUse as KeyUse).close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
