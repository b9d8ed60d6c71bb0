/**
 * The HTTP server's side of OpenTelemetry, made here instead of by @opentelemetry/instrumentation-http
 * (docs/decisions/0017): one SERVER span per request, named by the contract's route template,
 * and the `http.server.request.duration` histogram by method, route and status. The
 * instrumentation's incoming side binds every listener of the request and response to the
 * request's context and builds a dozen attributes for its span and its metric; on the fastest
 * read that was most of what tracing cost. Outgoing requests (webhook deliveries) keep the
 * instrumentation.
 *
 * Only src/main.ts wraps its server with it, and only when the SDK was started: off, nothing
 * here runs.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  context,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Histogram,
  type Span,
} from '@opentelemetry/api';
import { OBSERVED_REQUEST, type ObservedRequest } from './telemetry.js';

/** Probes answer every few seconds: their spans and series would bury the requests. */
const PROBES = new Set(['/healthz', '/readyz']);

/** The methods a label may carry (OpenTelemetry's HTTP conventions); any other is `_OTHER`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** `a=1&b=2` as `a=REDACTED&b=REDACTED`; a name that is no short plain word is redacted too. */
function redactedQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const name = pair.split('=')[0]!;
      return `${/^[A-Za-z][\w.-]{0,31}$/.test(name) ? name : 'REDACTED'}=REDACTED`;
    })
    .join('&');
}

/** The attributes the span starts with: what the request says about itself, no secret in them. */
function requestAttributes(req: IncomingMessage, method: string, path: string, query: string | undefined): Attributes {
  const attributes: Attributes = {
    'http.request.method': method,
    'url.scheme': 'http',
    'url.path': path,
    'network.protocol.version': req.httpVersion,
    'network.peer.address': req.socket.remoteAddress,
    'network.peer.port': req.socket.remotePort,
  };
  if (method === '_OTHER') attributes['http.request.method_original'] = req.method;
  // The API takes no secret in a URL, but a client may send one anyway: names and values redacted.
  if (query !== undefined) attributes['url.query'] = redactedQuery(query);
  const agent = req.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = agent;
  return attributes;
}

/** Wraps the app's request listener: each request in its span (when traced) and counted in the histogram. */
export function observeRequests(app: RequestListener, options: { traces: boolean }): RequestListener {
  const tracer = trace.getTracer('shipyard');
  const duration = metrics.getMeter('shipyard').createHistogram('http.server.request.duration', {
    unit: 's',
    description: 'How long the server took to answer a request, by method, route template and status.',
    // OpenTelemetry's advice for this instrument.
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
  });
  return (req, res) => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const path = at < 0 ? url : url.slice(0, at);
    if (PROBES.has(path)) return void app(req, res);
    const started = performance.now();
    const method = METHODS.has(req.method ?? '') ? req.method! : '_OTHER';
    const observed: ObservedRequest = {};
    // A caller's traceparent is continued (its trace id reaches the logs and the problems) even
    // when this process records no spans of its own.
    let ctx = propagation.extract(ROOT_CONTEXT, req.headers);
    let span: Span | undefined;
    if (options.traces) {
      span = tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: requestAttributes(req, method, path, at < 0 ? undefined : url.slice(at + 1)),
        },
        ctx,
      );
      ctx = trace.setSpan(ctx, span);
    }
    // 'close' comes once the response is sent or the connection is gone, whichever is first.
    res.once('close', () => ended(res, method, observed, performance.now() - started, span, duration));
    context.with(ctx.setValue(OBSERVED_REQUEST, observed), () => app(req, res));
  };
}

function ended(
  res: ServerResponse,
  method: string,
  observed: ObservedRequest,
  ms: number,
  span: Span | undefined,
  duration: Histogram,
): void {
  const status = res.statusCode;
  // A response cut off before its end is an error whatever its status line said.
  const error = !res.writableFinished ? 'aborted' : status >= 500 ? String(status) : undefined;
  // What the request's end adds; the span has the rest since it started.
  const outcome: Attributes = {};
  // Gone before any answer (the client left, or the request's time ran out): no status was sent.
  if (res.headersSent) outcome['http.response.status_code'] = status;
  if (observed.route) outcome['http.route'] = observed.route;
  if (error) outcome['error.type'] = error;
  duration.record(ms / 1000, {
    'http.request.method': method,
    'url.scheme': 'http',
    'network.protocol.version': res.req.httpVersion,
    ...outcome,
  });
  if (!span) return;
  if (observed.route) span.updateName(`${method} ${observed.route}`);
  span.setAttributes(outcome);
  // The client as express saw it: behind a trusted proxy, the address the proxy forwarded.
  const client = (res.req as { ip?: string }).ip ?? res.req.socket.remoteAddress;
  if (client) span.setAttribute('client.address', client);
  if (error) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
