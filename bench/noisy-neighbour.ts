/**
 * The noisy neighbour: one key spends its whole budget on the most expensive operation (image
 * uploads at the pixel limit), while another user's key reads GET /users/me on the same
 * instance, one request at a time. Prints that reader's p50 and p99 idle and under the
 * uploads, twice: uploads paced as the default budget allows (the target), then four uploaders
 * flat out, as many keys with no budget between them would send (information: the decode queue
 * is what bounds it then).
 */
import { readFor } from './reader.js';
import { zeroPng } from '../test/fixtures/images.js';

export type NeighbourFigures = { p50: number; p99: number; reads: number; uploads: Record<number, number> };

/** Uploads until `stop`, each `gapMs` after the last began; the answers counted by status. */
async function uploadUntil(url: string, token: string, image: Buffer, gapMs: number, stop: { done: boolean }) {
  const statuses: Record<number, number> = {};
  while (!stop.done) {
    const began = Date.now();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'zeros.png');
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, Math.max(0, gapMs - (Date.now() - began))));
  }
  return statuses;
}

export async function noisyNeighbour(opts: {
  api: string;
  readerToken: string;
  uploaderToken: string;
  seconds: number;
  /** The default per-key budget, units a minute (the bench's service runs with budgets out of the way). */
  budgetPerMinute: number;
}): Promise<{
  pixels: number;
  cost: number;
  idle: NeighbourFigures;
  paced: NeighbourFigures;
  flatOut: NeighbourFigures;
}> {
  const limits = await (
    await fetch(`${opts.api}/platform/limits`, { headers: { authorization: `Bearer ${opts.readerToken}` } })
  ).json();
  const cost: number = limits.requestCosts.operations.uploadMedia ?? limits.requestCosts.default;
  const side = Math.floor(Math.sqrt(limits.imagePixels));
  const image = zeroPng(side, side);
  const me = `${opts.api}/users/me`;
  const ms = opts.seconds * 1000;
  const measure = async (uploaders: number, gapMs: number): Promise<NeighbourFigures> => {
    const stop = { done: false };
    const uploads = Array.from({ length: uploaders }, () =>
      uploadUntil(`${opts.api}/media`, opts.uploaderToken, image, gapMs, stop),
    );
    const reads = await readFor(me, opts.readerToken, ms);
    stop.done = true;
    const counted: Record<number, number> = {};
    for (const s of await Promise.all(uploads))
      for (const [status, n] of Object.entries(s)) counted[Number(status)] = (counted[Number(status)] ?? 0) + n;
    return { ...reads, uploads: counted };
  };
  await readFor(me, opts.readerToken, 1000); // warm-up
  const idle = await measure(0, 0);
  // The budget allows budgetPerMinute / cost uploads a minute, spread evenly.
  const paced = await measure(1, (60_000 * cost) / opts.budgetPerMinute);
  const flatOut = await measure(4, 0);
  return { pixels: side * side, cost, idle, paced, flatOut };
}
