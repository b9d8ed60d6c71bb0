/**
 * The middleware in the order a request meets it:
 *   request context (id, ORM fork, access log)
 *   → security headers (helmet), CORS for /api/v1 (no credentials)
 *   → /healthz (liveness), /readyz (database reachable, else 503)
 *   → the web application: every path outside /api/v1 (src/web/web.routes.ts)
 *   → a 30 s answer deadline (503)
 *   → /api/v1/mcp (its own auth gate, budgets and JSON-RPC errors)
 *   → contract validator: route match (404/405) → authenticate (401, or 429 for an address
 *     that sent too many bad keys) → per-key and per-user budgets (429)
 *     → scope (403) → JSON body (1 MiB, UTF-8, no duplicate keys: src/http/kit/json-body.ts)
 *     → request validation (400)
 *   → text with U+0000 refused (400: PostgreSQL cannot store it)
 *   → Idempotency-Key on creates: replay the first response (or 409 / 422)
 *   → the operation's handler → presenter → response (validated against the contract)
 *   → one problem+json error handler.
 */
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { usePublicSite } from './db/public-site.js';
import type { Config } from './config.js';
import {
  loadContract,
  listOperations,
  basePath,
  closedForValidation,
  patternMessages,
  type OpenApiDocument,
  type Operation,
  servedAsBuilt,
} from './kernel/contract.js';
import { contractValidator, validatorProblem } from './http/validator.js';
import { replicaReads, type ReplicaReads } from './http/replica-reads.js';
import { deprecation } from './http/deprecation.js';
import { dispatchOperations, routeOf } from './http/operations.js';
import { answerCheck, type AnswerCheck } from './http/answer-check.js';
import { chain, chainWithErrors } from './http/kit/chain.js';
import { emptySegmentHint, problemHandler } from './http/errors.js';
import { notFound, type ProblemError } from './kernel/problem.js';
import { nameRoute } from './telemetry/telemetry.js';
import { refuseNul } from './http/kit/nul.js';
import { formEncodedQuery } from './http/form-query.js';
import { headAgain, headAgainStage, headAsGet } from './http/head.js';
import { unknownFields } from './http/unknown-fields.js';
import { cors, securityHeaders } from './http/security.js';
import { databaseState } from './db/ready.js';
import { idempotency } from './http/idempotency.js';
import { requestTimeout } from './http/timeout.js';
import { requestContext } from './http/context.js';
import { requireHost } from './http/client-errors.js';
import { createLogger } from './http/log.js';
import type { Logger } from './kernel/logger.js';
import { allHandlers } from './routes.js';
import { mcpRouter } from './mcp/mcp.routes.js';
import { mcpOrigins } from './mcp/origins.js';
import { oauthRouter, oauthSite } from './oauth/oauth.routes.js';
import type { MetadataFetchPolicy } from './oauth/client-metadata.js';
import { LocalDiskStorage, type MediaStorage } from './media/storage.js';
import { DEFAULT_MEDIA_QUOTA_BYTES } from './media/media.service.js';
import { failedAuthBudget, freeOpenings, requestBudget, SharedLimitStore, signInBudget } from './http/rate-limit.js';
import type { FailedAuth } from './http/kit/budget-hooks.js';
import { MAX_KEY_DAYS, type RateLimits } from './kernel/limits.js';
import { MemoryCounters, RedisCounters, type Counters, type RedisLink } from './budgets/counters.js';
import { KeyCache } from './keys/key-cache.js';
import { KeyUse } from './keys/key-use.js';
import type { ChangeFeed } from './db/changes.js';
import { webRouter } from './web/web.routes.js';
import type { AccountLimits } from './web/account.pages.js';
import type { PasswordCheck } from './users/password-policy.js';
import { GithubClient } from './github/github.client.js';
import { SearchCache } from './search/search-cache.js';
import { randomBytes } from 'node:crypto';
import { SecretBox } from './webhooks/secrets.js';
import type { WebhookSettings } from './webhooks/webhooks.service.js';
import type { SearchPage } from '../codegen/generated/api/types.gen.js';

export type AppDeps = {
  orm: MikroORM;
  config: Pick<
    Config,
    'validateResponses' | 'logLevel' | 'uploadMaxBytes' | 'mediaDir' | 'rateLimitPerMinute' | 'failedAuthPerMinute'
  > &
    Partial<
      Pick<
        Config,
        | 'trustProxy'
        | 'rateLimitPerUserPerMinute'
        | 'mediaQuotaBytes'
        | 'mediaUnattachedHours'
        | 'keyMaxDays'
        | 'securityLogDays'
        | 'keyUnusedDays'
        | 'databaseReadUrl'
      >
    > & {
      requestTimeoutMs?: number;
      /** Only tests set it: a shorter request-budget window than a minute. */
      rateLimitWindowMs?: number;
      keyCacheSeconds?: number;
      /** How often the keys' use is written (2 s; tests shorten it). */
      keyUseFlushMs?: number;
      searchCacheSeconds?: number;
      countsCacheSeconds?: number;
      publicUrl?: string;
      mcpAllowedOrigins?: string[];
      signInAttemptsPer15Minutes?: number;
      githubApiUrl?: string;
      githubToken?: string;
      /** OAuth client registrations one address may make an hour (300: hosted connectors register from a few addresses). */
      oauthRegistrationsPerHour?: number;
      /** Tests only: client metadata documents may be served from this machine, with this CA. */
      oauthClientMetadata?: MetadataFetchPolicy;
    };
  log?: Logger;
  contract?: OpenApiDocument;
  storage?: MediaStorage;
  /** Shared rate-limit budgets across instances (a client, connected or connecting), else in memory. */
  redis?: RedisLink;
  /** The database's change notices (src/db/changes.ts): revocations reach the key cache at once. */
  changes?: ChangeFeed;
  /**
   * The password policy for sign-ups: the server's runs on its own thread
   * (src/users/password-thread.ts), so that checking one password never stalls other requests.
   */
  checkPassword: PasswordCheck;
  /** How webhook secrets are sealed and where webhooks may go (by default: a key of this process's own, public URLs only). */
  webhooks?: WebhookSettings;
  /**
   * Make the contract validator's parts in the background, one per turn of the event loop, so
   * that no request pays for making one (the server does; a test server makes those it uses).
   */
  warmValidators?: boolean;
};

export function createApp({
  orm,
  config,
  log = createLogger(config.logLevel),
  contract = loadContract(),
  storage = new LocalDiskStorage(config.mediaDir),
  redis,
  changes,
  checkPassword,
  webhooks = { box: new SecretBox(randomBytes(32)), urls: { allowLocal: false } },
  warmValidators = false,
}: AppDeps): Express {
  const operations = listOperations(contract); // refuses to boot on an unguarded operation
  servedAsBuilt(contract);
  const base = basePath(contract);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Behind a reverse proxy the peer address is the proxy's: the per-address limits (failed keys,
  // failed sign-ins, sign-ups) would then spend one budget for every client. TRUST_PROXY names the proxies
  // whose X-Forwarded-For says who the client is; nobody else's header counts.
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);

  const limits = rateLimits(config);
  const counters: Counters = redis ? new RedisCounters(redis, new MemoryCounters(), log) : new MemoryCounters();
  const budget = requestBudget(counters, limits);
  const replica = config.databaseReadUrl ? replicaReads(counters) : undefined;
  const failedAuth = failedAuthBudget(counters, limits);
  const keys = new KeyCache((config.keyCacheSeconds ?? 10) * 1000, changes);
  const uses = new KeyUse(orm, log, config.keyUseFlushMs);
  // Answers hand out the public pages' and feeds' URLs on this address (src/db/public-site.ts).
  usePublicSite(orm, config.publicUrl ?? 'http://localhost');
  const keysPage = new URL('/settings/keys', config.publicUrl ?? 'http://localhost').href;
  app.locals.keyCache = keys;
  /** Whoever stops the app stops its counters' heartbeat (close). */
  app.locals.counters = counters;
  /** Written on its own every few seconds; whoever stops the app flushes it (close). */
  app.locals.keyUse = uses;

  app.use(chain(requestContext(orm, log), securityHeaders(), requireHost));
  app.use(base, cors(contract, { except: '/mcp' }));
  // OAuth sign-in for MCP clients: its metadata and endpoints sit at the root of the origin.
  const site = config.publicUrl ? oauthSite(config.publicUrl, base) : { off: 'no PUBLIC_URL is set' };
  const oauth = 'off' in site ? undefined : site;
  if (oauth)
    app.use(
      oauthRouter({
        orm,
        site: oauth,
        log,
        registrationsPerHour: config.oauthRegistrationsPerHour ?? 300,
        clientMetadata: config.oauthClientMetadata,
        keyMaxDays: config.keyMaxDays,
        // The SDK handlers' own limiters count in the shared budgets (Redis when there is one).
        limitStore: (endpoint) => new SharedLimitStore(counters, `oauth:${endpoint}:`),
      }),
    );
  else if ('off' in site) log.info('OAuth sign-in is off', { reason: site.off });
  app.get('/healthz', liveness);
  app.get('/readyz', readiness(orm, counters, redis !== undefined));
  // The web application (sign-in, Settings → Manage API keys, moderation, /docs): everything outside the API.
  const web = webApplication(
    config,
    contract,
    { accountLimits: signInBudget(counters, limits), checkPassword, oauthIssuer: oauth?.issuer },
    log,
    storage,
  );
  // One case policy: paths are matched whatever their case, the base path too (/API/V1/projects is
  // /api/v1/projects), as the contract validator matches the rest. Every path under /api/ is the
  // API's, and whatever of it matches no operation is a 404 problem, never the web's HTML page.
  app.use((req, res, next) => (isApiPath(req.path) ? next() : web(req, res, next)));
  app.use(base, requestTimeout(requestTimeoutMs(config)));
  app.use(
    `${base}/mcp`,
    mcpRouter({
      log,
      budget,
      freeOpening: freeOpenings(counters, limits),
      failedAuth,
      keys,
      uses,
      keysPage,
      checkOutput: config.validateResponses,
      origins: mcpOrigins(config.publicUrl, config.mcpAllowedOrigins),
      resourceMetadata: oauth?.mcpResourceMetadata,
      noteWrites: replica?.noteWrites,
    }),
  );
  // The contract as the request validator and the answer check read it: every object closed to unknown fields.
  const closed = closedForValidation(contract);
  const checkAnswer = config.validateResponses ? answerCheck(closed) : undefined;
  const problems = problemHandler(log, {
    checkAnswer,
    uploadMaxBytes: config.uploadMaxBytes,
    patternMessages: patternMessages(contract),
    unknownFields: unknownFields(contract),
    resourceMetadata: oauth?.apiResourceMetadata,
  });
  app.use(
    base,
    restPipeline({
      config,
      contract,
      closed,
      operations,
      storage,
      limits,
      budget,
      failedAuth,
      keys,
      uses,
      keysPage,
      problems,
      checkAnswer,
      log,
      webhooks,
      warmValidators,
      replica,
    }),
  );
  app.use((req, _res, next) => next(notInThisApi(req.path, base)));
  app.use(problems);
  return app;
}

/** How long any request may take to answer, API or web page, before its 503 (30 s). */
const requestTimeoutMs = (config: AppDeps['config']) => config.requestTimeoutMs ?? 30_000;

/** The API's side of the house: any path under /api/, whatever its case or leading slashes. */
const isApiPath = (path: string) => /^\/+api(?:\/|$)/i.test(path);

/** A path on the API's side that no operation has: where the API's paths are. */
function notInThisApi(path: string, base: string): ProblemError {
  return notFound(
    `There is no ${path.slice(0, 200)} in this API: its paths start with ${base}/ (see ${base}/openapi.json).${emptySegmentHint(path)}`,
  );
}

function rateLimits(config: AppDeps['config']): RateLimits {
  return {
    requestsPerMinutePerKey: config.rateLimitPerMinute,
    requestsPerMinutePerUser: config.rateLimitPerUserPerMinute ?? 2 * config.rateLimitPerMinute,
    failedAuthPerMinutePerAddress: config.failedAuthPerMinute,
    signInAttemptsPerAddress: config.signInAttemptsPer15Minutes,
    windowMs: config.rateLimitWindowMs,
  };
}

/** Liveness: the process answers. */
const liveness: RequestHandler = (_req, res) => {
  res.json({ status: 'ok' });
};

/** Readiness: the database answers too. Redis is not required: without it the budgets are counted per instance ("local"). */
function readiness(orm: MikroORM, counters: Counters, withRedis: boolean): RequestHandler {
  return async (_req, res) => {
    await counters.probe();
    const database = await databaseState(orm);
    const ok = database === 'ok';
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ready' : 'unavailable',
      database,
      ...(withRedis ? { redis: counters.mode === 'shared' ? 'ok' : 'unreachable' } : {}),
      rateLimits: counters.mode,
    });
  };
}

function webApplication(
  config: AppDeps['config'],
  contract: OpenApiDocument,
  accounts: { accountLimits: AccountLimits; checkPassword: PasswordCheck; oauthIssuer?: string },
  log: Logger,
  storage: MediaStorage,
) {
  const github = new GithubClient({
    baseUrl: config.githubApiUrl ?? 'https://api.github.com',
    token: config.githubToken,
  });
  return webRouter({
    contract,
    publicUrl: config.publicUrl ?? 'http://localhost',
    ...accounts,
    log,
    github,
    timeoutMs: requestTimeoutMs(config),
    keyMaxDays: config.keyMaxDays ?? MAX_KEY_DAYS,
    securityLogDays: config.securityLogDays ?? 90,
    keyUnusedDays: config.keyUnusedDays ?? 30,
    storage,
  });
}

/** The REST pipeline, as one Express layer (src/http/kit/chain.ts) that answers its own errors. */
function restPipeline(p: {
  webhooks: WebhookSettings;
  config: AppDeps['config'];
  contract: OpenApiDocument;
  /** The contract closed to unknown fields (closedForValidation), for the validator. */
  closed: OpenApiDocument;
  operations: Operation[];
  storage: MediaStorage;
  limits: RateLimits;
  budget: RequestHandler;
  failedAuth: FailedAuth;
  keys: KeyCache;
  uses: KeyUse;
  keysPage: string;
  problems: ErrorRequestHandler;
  /** Each handler's JSON answer checked against the contract (VALIDATE_RESPONSES). */
  checkAnswer?: AnswerCheck;
  log: Logger;
  warmValidators: boolean;
  /** With a read replica: the reads that go there, and the writes that keep their users on the primary. */
  replica?: ReplicaReads;
}) {
  const { config, contract, closed, budget, failedAuth, keys, keysPage, problems } = p;
  const deprecated = deprecation(contract);
  const routes = new Map(p.operations.map((op) => [op.operationId, routeOf(op)]));
  const answer: ErrorRequestHandler = (err, req, res, next) => {
    headAgain(req);
    // Refused after the validator matched its operation (401, 403, 400…): named by that operation's route.
    const route = routes.get(req.openapi?.schema?.operationId ?? '');
    if (route) nameRoute(route);
    // A refusal the validator made before any of our stages ran still says the operation is deprecated.
    deprecated(req, res, () => undefined);
    validatorProblem(err, req, failedAuth).then((problem) => problems(problem, req, res, next), next);
  };
  return chainWithErrors(
    answer,
    formEncodedQuery,
    headAsGet,
    ...contractValidator(closed, {
      ...config,
      budget,
      failedAuth,
      keys,
      keysPage,
      uses: p.uses,
      warm: p.warmValidators,
    }),
    headAgainStage,
    refuseNul,
    idempotency(),
    ...(p.replica ? [p.replica.noteWrites, p.replica.route] : []),
    dispatchOperations(
      p.operations,
      allHandlers(contract, {
        storage: p.storage,
        media: {
          uploadBytes: config.uploadMaxBytes,
          quotaBytes: config.mediaQuotaBytes ?? DEFAULT_MEDIA_QUOTA_BYTES,
          unattachedHours: config.mediaUnattachedHours ?? 24,
        },
        limits: p.limits,
        searchCache: new SearchCache<SearchPage>((config.searchCacheSeconds ?? 10) * 1000),
        countsCacheSeconds: config.countsCacheSeconds ?? 60,
        keyMaxDays: config.keyMaxDays,
        webhooks: p.webhooks,
        site: config.publicUrl ?? 'http://localhost',
        log: p.log,
      }),
      p.log,
      p.checkAnswer,
    ),
  );
}
