// The node options the server runs with, one list for every way it starts: `bin/shipyard serve`,
// `bin/shipyard worker`, `npm start` (so `make run`) and `make bench` (docs/operations.md):
// - a heap cap, HEAP_MB megabytes (512 by default);
// - no allocation-site pretenuring: with many requests in flight V8 would move each request's
//   short-lived objects straight to the old generation, and full collections would come often;
// - stack traces that point into src/, not dist/;
// - OpenTelemetry's start (src/instrument.ts), loaded before the server's own modules so
//   that its instrumentations are in place when http, pg and redis load; it loads nothing more
//   unless the OTEL_* variables or METRICS_PORT ask for it.
const TELEMETRY = new URL('../dist/src/instrument.js', import.meta.url).href;

export function serverNodeOptions(env = process.env) {
  return [
    `--max-old-space-size=${env.HEAP_MB || 512}`,
    '--no-allocation-site-pretenuring',
    '--enable-source-maps',
    `--import=${TELEMETRY}`,
  ];
}
