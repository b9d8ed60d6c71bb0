/**
 * @shipyard/sdk — the TypeScript client for the Shipyard API. The operations, their parameters
 * and types are generated from the OpenAPI contract by @hey-api/openapi-ts; this layer adds what
 * an integrator needs around them: a client bound to one server and key, typed errors, retries
 * with idempotency, timeouts and pagination.
 *
 *   const shipyard = createShipyard({ baseUrl: 'https://shipyard.example', apiKey });
 *   const { data } = await shipyard.getProject({ path: { projectId }, throwOnError: true });
 */
import type { Client } from './generated/client/index.js';
import { client as unconfigured } from './generated/client.gen.js';
import * as operations from './generated/sdk.gen.js';
import { type CallSettings, createShipyardClient, plainHeaders, type ShipyardOptions } from './client.js';
import type { ShipyardError } from './errors.js';
import { verifySignedBody, type VerifyOptions, type WebhookHeaders } from './webhooks.js';
import { type PublicOperationName, SESSION_ONLY, type SessionOnlyOperationName } from './meta.js';
import type {
  BuildLogEvent,
  MemberEvent,
  MilestoneEvent,
  PingEvent,
  Post,
  PostSummary,
  ProjectEvent,
} from './generated/types.gen.js';

/** Any event Shipyard sends to a webhook subscription, told apart by `type`. */
export type WebhookEvent = MilestoneEvent | BuildLogEvent | ProjectEvent | MemberEvent | PingEvent;

/**
 * The event a webhook delivered, once its Standard Webhooks signature and timestamp check out
 * (a ShipyardWebhookError otherwise). Pass the raw body as received, not re-serialised JSON.
 *
 *   const event = await verifyWebhook(process.env.SHIPYARD_WEBHOOK_SECRET!, rawBody, req.headers);
 *   if (event.type === 'milestone.updated') console.log(event.data.milestone.title);
 */
export const verifyWebhook = (
  secret: string,
  body: string | Uint8Array,
  headers: WebhookHeaders,
  options?: VerifyOptions,
): Promise<WebhookEvent> => verifySignedBody<WebhookEvent>(secret, body, headers, options);

/**
 * Whether a listed post is a summary (`view: 'summary'`: an `excerpt`, no `body`) rather than the
 * whole post. The lists of posts answer either, as the request's `view` asked:
 *
 *   const { data } = await shipyard.listPosts({ query: { view: 'summary' }, throwOnError: true });
 *   for (const post of data.items) if (isPostSummary(post)) console.log(post.excerpt);
 */
export const isPostSummary = (post: Post | PostSummary): post is PostSummary => !('body' in post);

export * from './generated/index.js';
export type { Client, Config } from './generated/client/index.js';
export { type Problem, ShipyardError, ShipyardNetworkError, ShipyardTimeoutError } from './errors.js';
export {
  PROBLEM_CODES,
  PROBLEM_SLUGS,
  type ProblemCode,
  type ProblemKind,
  type ProblemSlug,
  type ProblemType,
} from './problem-types.js';
export {
  DEFAULTS,
  type CallSettings,
  type DeprecationNotice,
  type RequestEvent,
  type ResponseEvent,
  type ShipyardOptions,
} from './client.js';
export { API_VERSION, type PublicOperationName, SDK_VERSION } from './meta.js';
export { ShipyardWebhookError, type VerifyOptions, type WebhookHeaders } from './webhooks.js';

// The generated functions fall back to a client without a server; say so instead of "Failed to parse URL".
unconfigured.interceptors.error.use((error) => {
  if (!unconfigured.getConfig().baseUrl?.includes('://')) {
    throw new TypeError(
      'Shipyard SDK: no server configured. Create a client with createShipyard({ baseUrl, apiKey }) (apiKey: null for the public feeds) ' +
        'and call its methods, or pass its `client` to the function.',
    );
  }
  return error;
});

type Operations = typeof operations;
/** The operationIds of the API. */
export type OperationName = keyof Operations;

type Settled<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;
/** What an operation answers with on success. */
export type DataOf<F> = Extract<Settled<F>, { error: undefined }> extends { data: infer D } ? D : never;
type OptionsOf<F> = F extends (options: infer O) => unknown ? NonNullable<O> : never;
/** An operation's options on a Shipyard client: its parameters, `throwOnError`, and per-call settings. */
export type CallOptions<F, ThrowOnError extends boolean> = Omit<
  OptionsOf<F>,
  'client' | 'throwOnError' | 'responseStyle'
> &
  CallSettings & { throwOnError?: ThrowOnError };
type ArgsOf<F, ThrowOnError extends boolean> = F extends (options: infer O) => unknown
  ? undefined extends O
    ? [options?: CallOptions<F, ThrowOnError>]
    : [options: CallOptions<F, ThrowOnError>]
  : never;

/**
 * A call's outcome. With `throwOnError: true`, the data (an error answer throws a ShipyardError);
 * otherwise either the data or the ShipyardError. The response is always there: a call that got
 * no answer throws a ShipyardNetworkError either way.
 */
export type Result<Data, ThrowOnError extends boolean> = ThrowOnError extends true
  ? { data: Data; error?: undefined; response: Response }
  : ({ data: Data; error: undefined } | { data: undefined; error: ShipyardError }) & { response: Response };

export type Operation<F> = <ThrowOnError extends boolean = false>(
  ...args: ArgsOf<F, ThrowOnError>
) => Promise<Result<DataOf<F>, ThrowOnError>>;

/**
 * A client for one server and key: every operation a key may call as a method, named by its
 * operationId (the web application's own, which refuse every key, are left out).
 */
export type Shipyard = {
  readonly [K in keyof Operations as K extends SessionOnlyOperationName ? never : K]: Operation<Operations[K]>;
} & {
  /** The underlying client, for the generated functions (`getProject({ client, … })`) and interceptors. */
  readonly client: Client;
};

/** A client without a key: the operations anybody may call (the feeds, the contract) and nothing else. */
export type PublicShipyard = Pick<Shipyard, PublicOperationName | 'client'>;

/**
 * A client for one Shipyard server and API key (or `apiKey: null`, for the public operations
 * only: the feeds and the contract). Throws a TypeError at once when `baseUrl` is not an
 * absolute http(s) URL or `apiKey` is neither a Shipyard key nor null.
 */
export function createShipyard(options: ShipyardOptions & { apiKey: string }): Shipyard;
export function createShipyard(options: ShipyardOptions & { apiKey: null }): PublicShipyard;
export function createShipyard(options: ShipyardOptions): Shipyard | PublicShipyard {
  const client = createShipyardClient(options);
  const methods = Object.fromEntries(
    Object.entries(operations)
      .filter(([name]) => !SESSION_ONLY.has(name))
      .map(([name, operation]) => [
        name,
        (callOptions?: { headers?: Parameters<typeof plainHeaders>[0] }) =>
          (operation as (o: object) => Promise<unknown>)({
            ...callOptions,
            // The generated function spreads these into an object: a Headers instance would lose its entries.
            headers: plainHeaders(callOptions?.headers),
            client,
          }),
      ]),
  );
  return Object.freeze({ ...methods, client }) as unknown as Shipyard;
}

type PageItem<F> = DataOf<F> extends { items: Array<infer Item>; nextCursor: unknown } ? Item : never;
type ListOptions<F> = Omit<OptionsOf<F>, 'throwOnError'> & CallSettings;

/** How far `paginate` goes. */
export interface PaginateLimits {
  /** Stop after this many items (the last page is not fetched further than needed). */
  maxItems?: number;
}

/** A list operation's options, then how far to go; anything but a cursor-paginated list is a type error. */
type PaginateArgs<F> = [PageItem<F>] extends [never]
  ? [options: never] // not a cursor-paginated list: a type error
  : F extends (options: infer O) => unknown
    ? undefined extends O
      ? [options?: ListOptions<F>, limits?: PaginateLimits]
      : [options: ListOptions<F>, limits?: PaginateLimits]
    : never;

/**
 * Every item of a cursor-paginated list, page after page (`nextCursor` → `cursor`):
 *
 *   for await (const m of paginate(shipyard.listMilestones, { path: { projectId } })) …
 *
 * Works with a Shipyard client's methods and with the generated functions given a `client`.
 * An error answer on any page throws its ShipyardError.
 */
export async function* paginate<F extends (options: never) => Promise<unknown>>(
  list: F,
  ...[options, limits = {}]: PaginateArgs<F>
): AsyncGenerator<PageItem<F>, void, undefined> {
  const call = list as unknown as (
    o: object,
  ) => Promise<{ data: { items: PageItem<F>[]; nextCursor?: string | null } }>;
  const given = (options ?? {}) as { query?: Record<string, unknown> };
  let cursor = given.query?.cursor as string | null | undefined;
  let yielded = 0;
  const max = limits.maxItems ?? Number.POSITIVE_INFINITY;
  if (yielded >= max) return;
  do {
    const query = { ...given.query, ...(cursor ? { cursor } : {}) };
    const { data } = await call({ ...given, query, throwOnError: true });
    if (!Array.isArray(data?.items))
      throw new TypeError('Shipyard SDK: paginate() takes a cursor-paginated list operation.');
    for (const item of data.items) {
      yield item;
      if (++yielded >= max) return;
    }
    cursor = data.nextCursor;
  } while (cursor);
}

/**
 * @deprecated Use `createShipyard({ baseUrl, apiKey }).client` (or the Shipyard object's methods).
 */
export function shipyardClient(options: ShipyardOptions): Client {
  return createShipyardClient(options);
}
