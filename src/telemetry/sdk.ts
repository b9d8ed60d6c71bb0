/**
 * The OpenTelemetry SDK for Node, as src/instrument.ts starts it: configured by the SDK's standard
 * variables (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, …) and METRICS_PORT
 * (docs/decisions/0017). Instrumented: outgoing HTTP through `node:http` (webhook
 * deliveries; GitHub's client uses fetch, which is not), PostgreSQL statements, Redis commands,
 * and the runtime (event-loop delay, heap). Incoming requests are observed by the server itself
 * (./requests.ts), named by the operation's route template. Express is not instrumented: its
 * middleware spans would only add noise and cost.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPMetricExporter as OtlpHttpJsonMetrics } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtobufMetrics } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as OtlpGrpcMetrics } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { AggregationType, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { onTelemetryStop } from './stop.js';
import { scrubSql } from './scrub.js';

/** What OpenTelemetry does in a process: src/config.ts reads it from the environment (telemetrySettings). */
export type TelemetrySettings = {
  /** Spans, exported by OTLP as the standard variables say. */
  traces: boolean;
  /** Metrics by OTLP, and over which protocol, or false. */
  otlpMetrics: false | 'http/json' | 'http/protobuf' | 'grpc';
  metricExportIntervalMs: number;
  /** Prometheus's exposition: where it listens. */
  prometheus: { host: string; port: number } | undefined;
};

/** A line on stderr as the service's logger writes them (the logger is not made yet). */
const logError = (msg: string, fields: Record<string, unknown>) =>
  process.stderr.write(`${JSON.stringify({ level: 'error', time: new Date().toISOString(), ...fields, msg })}\n`);

function metricReaders(settings: TelemetrySettings): { readers: MetricReader[]; listening?: Promise<boolean> } {
  const readers: MetricReader[] = [];
  const prometheus = settings.prometheus;
  let listening: Promise<boolean> | undefined;
  if (prometheus)
    listening = new Promise((resolve) =>
      readers.push(
        new PrometheusExporter(prometheus, (error) => {
          if (error)
            logError('the metrics could not listen: no Prometheus metrics from this process', {
              address: `${prometheus.host}:${prometheus.port}`,
              error: error.message,
            });
          resolve(!error);
        }),
      ),
    );
  if (settings.otlpMetrics)
    readers.push(
      new PeriodicExportingMetricReader({
        exportIntervalMillis: settings.metricExportIntervalMs,
        exportTimeoutMillis: Math.min(30_000, settings.metricExportIntervalMs),
        exporter:
          settings.otlpMetrics === 'http/json'
            ? new OtlpHttpJsonMetrics()
            : settings.otlpMetrics === 'grpc'
              ? new OtlpGrpcMetrics()
              : new OtlpProtobufMetrics(),
      }),
    );
  return { readers, listening };
}

/** The scheme, host and port of an outgoing request: a webhook's path may hold its receiver's secret. */
function origin(options: { protocol?: string | null; hostname?: string | null; host?: string | null; port?: unknown }) {
  const host = options.hostname ?? options.host ?? '';
  return `${options.protocol ?? 'http:'}//${host}${options.port ? `:${options.port}` : ''}`;
}

export function startTelemetry(settings: TelemetrySettings): void {
  const metrics = metricReaders(settings);
  const sdk = new NodeSDK({
    // `shipyard` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it otherwise.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'shipyard' })),
    // No traces: no span processor, so the SDK's default (OTLP to localhost) is not made.
    ...(settings.traces ? {} : { spanProcessors: [] }),
    metricReaders: metrics.readers,
    views: [
      // A webhook's receiver is chosen by its subscriber, host and port: by them, the outgoing
      // request's metric would grow a series per receiver. Deliveries have metrics of their own.
      { instrumentName: 'http.client.request.duration', aggregation: { type: AggregationType.DROP } },
    ],
    // The service logs as JSON lines on stderr (src/http/log.ts); no OpenTelemetry log records.
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // The server's spans and request metric are ours (./requests.ts); outgoing requests
        // (webhook deliveries) are the instrumentation's.
        disableIncomingRequestInstrumentation: true,
        // Outgoing calls are spans of the work that made them, never roots.
        requireParentforOutgoingSpans: true,
        startOutgoingSpanHook: (options) => ({ 'url.full': origin(options) }),
      }),
      new PgInstrumentation({
        // Traced, a statement belongs to a request or a job; the queue's polling would be thousands of roots.
        // Untraced, every statement counts in db.client.operation.duration.
        requireParentSpan: settings.traces,
        // A span per statement, not three: taking a pooled connection is no statement.
        ignoreConnectSpans: true,
        requestHook: (span, { query }) => {
          if (query.text && span.isRecording()) span.setAttribute('db.query.text', scrubbed(query.text, query.name));
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
  onTelemetryStop(() => sdk.shutdown(), { traces: settings.traces, metricsListening: metrics.listening });
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
