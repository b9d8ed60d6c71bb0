/**
 * One busy project: 60 writers add milestones to one project at once (a burst an agent fleet or a
 * script can send), while another user reads GET /users/me on the same instance, one request at
 * a time. Prints that reader's p50 and p99 idle and under the burst: a project's writers queue in
 * the instance and take a pooled connection only in their turn, so the reader's p99 should stay
 * under 3× idle (issue 58's target; before, 27 writers waited on the row lock, each holding a
 * connection, and the reader's p99 went from 76 to 939 ms).
 */
import { readFor } from './reader.js';
export type BusyFigures = { p50: number; p99: number; reads: number; writes: Record<number, number> };

export async function busyProject(opts: {
  api: string;
  readerToken: string;
  writerToken: string;
  writers: number;
  seconds: number;
}): Promise<{ idle: BusyFigures; busy: BusyFigures }> {
  const auth = { authorization: `Bearer ${opts.writerToken}`, 'content-type': 'application/json' };
  const made = await fetch(`${opts.api}/projects`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: `Busy ${Date.now()}` }),
  });
  if (made.status !== 201) throw new Error(`the busy project could not be made: ${made.status}`);
  const { id } = (await made.json()) as { id: string };
  const me = `${opts.api}/users/me`;
  const ms = opts.seconds * 1000;
  await readFor(me, opts.readerToken, 1000); // warm-up
  const idle = { ...(await readFor(me, opts.readerToken, ms)), writes: {} };
  const stop = { done: false };
  const writes: Record<number, number> = {};
  const writer = async (w: number) => {
    for (let i = 0; !stop.done; i++) {
      const res = await fetch(`${opts.api}/projects/${id}/milestones`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ title: `w${w} ${i}` }),
      });
      await res.arrayBuffer();
      writes[res.status] = (writes[res.status] ?? 0) + 1;
    }
  };
  const running = Array.from({ length: opts.writers }, (_, w) => writer(w));
  // The burst is under way before the reads are timed.
  await new Promise((r) => setTimeout(r, 500));
  const reads = await readFor(me, opts.readerToken, ms);
  stop.done = true;
  await Promise.all(running);
  return { idle, busy: { ...reads, writes } };
}
