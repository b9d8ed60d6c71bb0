/** One reader, one request at a time, for a while: its p50 and p99 (ms) and how many reads it made. */
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

export async function readFor(
  url: string,
  token: string,
  ms: number,
): Promise<{ p50: number; p99: number; reads: number }> {
  const times: number[] = [];
  for (const until = Date.now() + ms; Date.now() < until; ) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`the reader's GET ${url} answered ${res.status}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), reads: times.length };
}
