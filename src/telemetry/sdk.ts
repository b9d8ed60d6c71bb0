/**
 * The OpenTelemetry SDK for Node, as src/instrument.ts starts it: configured by the SDK's standard
 * variables (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, …) and METRICS_PORT
 * (docs/decisions/0015). Instrumented: incoming and outgoing HTTP, PostgreSQL statements, Redis
 * commands, and the runtime (event-loop delay, heap). Express is not instrumented: the
 * operation's route template names a request (./telemetry.ts, nameRoute), and its
 * middleware spans would only add noise and cost.
 */
import type { IncomingMessage } from 'node:http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPMetricExporter as OtlpHttpJsonMetrics } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtobufMetrics } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { onTelemetryStop } from './stop.js';
import { scrubSql } from './scrub.js';

/** What OpenTelemetry does in a process: src/config.ts reads it from the environment (telemetrySettings). */
export type TelemetrySettings = {
  /** Spans, exported by OTLP as the standard variables say. */
  traces: boolean;
  /** Metrics by OTLP, and over which protocol, or false. */
  otlpMetrics: false | 'http/json' | 'http/protobuf';
  metricExportIntervalMs: number;
  /** Prometheus's exposition: where it listens. */
  prometheus: { host: string; port: number } | undefined;
};

/** Probes answer every few seconds: their spans would bury the requests. */
const PROBES = new Set(['/healthz', '/readyz']);

export function startTelemetry(settings: TelemetrySettings): void {
  const readers: MetricReader[] = [];
  if (settings.prometheus) readers.push(new PrometheusExporter(settings.prometheus));
  if (settings.otlpMetrics)
    readers.push(
      new PeriodicExportingMetricReader({
        exportIntervalMillis: settings.metricExportIntervalMs,
        exportTimeoutMillis: Math.min(30_000, settings.metricExportIntervalMs),
        exporter: settings.otlpMetrics === 'http/json' ? new OtlpHttpJsonMetrics() : new OtlpProtobufMetrics(),
      }),
    );
  const sdk = new NodeSDK({
    // `shipyard` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it otherwise.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'shipyard' })),
    // No traces: no span processor, so the SDK's default (OTLP to localhost) is not made.
    ...(settings.traces ? {} : { spanProcessors: [] }),
    metricReaders: readers,
    // The service logs as JSON lines on stderr (src/http/log.ts); no OpenTelemetry log records.
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => PROBES.has((req.url ?? '').split('?')[0]!),
        // Outgoing calls (webhook deliveries, GitHub) are spans of the work that made them, never roots.
        requireParentforOutgoingSpans: true,
        requestHook: (span, req) => {
          // The API takes no secret in a URL, but a client may send one anyway: keep the names only.
          const query = 'headers' in req && (req as IncomingMessage).url?.split('?')[1];
          if (query) span.setAttribute('url.query', redactedQuery(query));
        },
      }),
      new PgInstrumentation({
        // Traced, a statement belongs to a request or a job; the queue's polling would be thousands of roots.
        // Untraced, every statement counts in db.client.operation.duration.
        requireParentSpan: settings.traces,
        // A span per statement, not three: taking a pooled connection is no statement.
        ignoreConnectSpans: true,
        requestHook: (span, { query }) => {
          if (query.text) span.setAttribute('db.query.text', scrubbed(query.text, query.name));
        },
      }),
      new RedisInstrumentation({
        requireParentSpan: settings.traces,
        // The command's name only: its keys name API keys and users, and the scripts are long.
        dbStatementSerializer: (command) => command,
      }),
      new RuntimeNodeInstrumentation(),
    ],
  });
  sdk.start();
  onTelemetryStop(() => sdk.shutdown());
}

/** A named (prepared) statement's text never changes: it is scrubbed once. */
const scrubbedByName = new Map<string, string>();

function scrubbed(text: string, name: string | undefined): string {
  if (name === undefined) return scrubSql(text);
  let clean = scrubbedByName.get(name);
  if (clean === undefined) {
    clean = scrubSql(text);
    scrubbedByName.set(name, clean);
  }
  return clean;
}

/** `a=1&b=2` as `a=REDACTED&b=REDACTED`. */
function redactedQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => `${pair.split('=')[0]}=REDACTED`)
    .join('&');
}
