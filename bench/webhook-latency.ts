/**
 * Webhook deliveries as the benchmark measures them: a receiver on loopback that notes when each
 * milestone's `milestone.created` arrived, and a steady stream of POSTs whose acknowledgement
 * times are set against those arrivals (commit to delivery, as a receiver sees it).
 */
import { createServer } from 'node:http';

export type HookReceiver = {
  url: string;
  /** Deliveries received, in all. */
  count: () => number;
  /** When the event for a milestone id arrived (performance.now()). */
  arrivals: Map<string, number>;
  close: () => void;
};

export async function hookReceiver(port: number): Promise<HookReceiver> {
  const arrivals = new Map<string, number>();
  let count = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      count++;
      const at = performance.now();
      const id = (JSON.parse(body) as { data?: { milestone?: { id?: string } } }).data?.milestone?.id;
      if (id && !arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${port}/hook`, count: () => count, arrivals, close: () => server.close() };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

/**
 * Waits until the deliveries the scenarios queued have all arrived (none for 3 s), then POSTs
 * `count` milestones at `perSecond` and reports, of those, the time from each 201 to its
 * delivery: p50 and p99 in ms, and how many never arrived within 30 s.
 */
export async function webhookLatency(opts: {
  receiver: HookReceiver;
  url: string;
  headers: Record<string, string>;
  count: number;
  perSecond: number;
}): Promise<{ p50: number; p99: number; missing: number; drainedMs: number }> {
  const drainStart = performance.now();
  for (let last = -1; last !== opts.receiver.count(); ) {
    last = opts.receiver.count();
    await new Promise((r) => setTimeout(r, 3000));
  }
  const drainedMs = performance.now() - drainStart;
  const acked = new Map<string, number>();
  const posts: Promise<void>[] = [];
  for (let i = 0; i < opts.count; i++) {
    posts.push(
      fetch(opts.url, { method: 'POST', headers: opts.headers, body: JSON.stringify({ title: `latency ${i}` }) }).then(
        async (res) => {
          const at = performance.now();
          if (res.status === 201) acked.set(((await res.json()) as { id: string }).id, at);
        },
      ),
    );
    await new Promise((r) => setTimeout(r, 1000 / opts.perSecond));
  }
  await Promise.all(posts);
  const deadline = performance.now() + 30_000;
  while ([...acked.keys()].some((id) => !opts.receiver.arrivals.has(id)) && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const latencies = [...acked]
    .flatMap(([id, at]) => (opts.receiver.arrivals.has(id) ? [opts.receiver.arrivals.get(id)! - at] : []))
    .sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    missing: acked.size - latencies.length,
    drainedMs,
  };
}
