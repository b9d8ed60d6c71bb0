/**
 * What the service tells OpenTelemetry, through its API only: spans of its own, the route template
 * of a request, the trace id, and the metrics no instrumentation knows (docs/operations.md, the
 * names). The SDK, when the settings ask for one, is started before any of this loads
 * (src/instrument.ts); without it every call here is the API's no-op.
 */
import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  metrics,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const tracer = trace.getTracer('shipyard');
// The API has no proxy for meters: the SDK must be started before this module loads (it is:
// src/instrument.ts is node's --import), or these instruments stay no-ops.
const meter = metrics.getMeter('shipyard');
/** The outbox's own way to carry a trace, whatever OTEL_PROPAGATORS says for HTTP. */
const w3c = new W3CTraceContextPropagator();

/** The id of the trace this code runs in, when there is one (traced, or continued from a caller). */
export function traceId(): string | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  return span && trace.isSpanContextValid(span) ? span.traceId : undefined;
}

/** What the HTTP server learns about a request while it runs (./requests.ts): its route, once an operation matched. */
export type ObservedRequest = { route?: string };

export const OBSERVED_REQUEST = createContextKey('shipyard.request');

/**
 * The request's route as the contract writes it (`/api/v1/projects/{projectId}`): the HTTP server
 * span's name and `http.route`, and the request-duration metric's label. Express alone sees only
 * the mount path, and a raw path would give every id a series of its own. Outside an observed
 * request (telemetry off, a test's in-process server) it does nothing.
 */
export function nameRoute(route: string): void {
  const observed = context.active().getValue(OBSERVED_REQUEST) as ObservedRequest | undefined;
  if (observed) observed.route = route;
}

/** Attributes on the request's own span (the HTTP server span): what an MCP request asked. */
export function describeRequest(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * Runs `work` in a span of its own, a child of the current one (or of `parent`): a throw is
 * recorded on it and rethrown.
 */
export async function inSpan<T>(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** The current trace as a W3C `traceparent`, to travel with work done later (an outbox event), or null. */
export function traceParent(): string | null {
  const carrier: { traceparent?: string } = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/** The context a `traceparent` names: later work continues the trace that caused it. */
export function continuing(traceparent: string | null | undefined): Context {
  return traceparent ? w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter) : ROOT_CONTEXT;
}

export { SpanKind, SpanStatusCode };

/** The service's own instruments; the names follow OpenTelemetry's conventions where there is one. */
export const measure = {
  /** One MCP call: `mcp.method.name`, `gen_ai.tool.name`, `mcp.protocol.version`, and `error.type` when it failed. */
  mcpOperation: meter.createHistogram('mcp.server.operation.duration', {
    unit: 's',
    description: 'How long an MCP call took on the server, by method, tool and outcome.',
  }),
  /** A request refused by a budget: `shipyard.budget` (key, user, address, failed_auth, sign_in, sign_up). */
  rateLimitRefusals: meter.createCounter('shipyard.rate_limit.refusals', {
    description: 'Requests refused because a budget was spent (429), by budget.',
  }),
  /** One delivery attempt's end: `shipyard.outcome` (delivered, failed, given_up). */
  webhookDeliveries: meter.createCounter('shipyard.webhook.deliveries', {
    description: 'Webhook delivery attempts, by outcome.',
  }),
  /** From the change's commit to its event's delivery. */
  webhookLatency: meter.createHistogram('shipyard.webhook.delivery.latency', {
    unit: 's',
    description: 'Seconds from the change that caused an event to its delivery.',
    advice: { explicitBucketBoundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600] },
  }),
  /** An API key looked up: `shipyard.result` (hit, miss). */
  keyCacheLookups: meter.createCounter('shipyard.key_cache.lookups', {
    description: 'API key lookups, answered from the cache (hit) or the database (miss).',
  }),
};

meter
  .createObservableGauge('process.memory.usage', {
    unit: 'By',
    description: 'The resident set size of the process.',
  })
  .addCallback((result) => result.observe(process.memoryUsage.rss()));
