// The node options the server runs with, one list for every way it starts: `bin/shipyard serve`,
// `npm start` (so `make run`) and `make bench` (docs/operations.md):
// - a heap cap, HEAP_MB megabytes (512 by default);
// - no allocation-site pretenuring: with many requests in flight V8 would move each request's
//   short-lived objects straight to the old generation, and full collections would come often;
// - stack traces that point into src/, not dist/.
export function serverNodeOptions(env = process.env) {
  return [`--max-old-space-size=${env.HEAP_MB || 512}`, '--no-allocation-site-pretenuring', '--enable-source-maps'];
}
