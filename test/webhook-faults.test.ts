/**
 * Webhook delivery under faults, on a throwaway PostgreSQL cluster (test/pg-cluster.ts). Each
 * test counts the changes the API acknowledged (201) against the deliveries a receiver verified
 * with the Standard Webhooks library: every acknowledged change must arrive at least once.
 * Back-off is shortened (1-2 s instead of 30 s to 6 h), so a receiver's "day" down is a few
 * seconds of retries; everything else is as in production.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { type ServerOptions, startServer, type TestServer, uniqueName, userWithKey } from './harness.js';
import { type Cluster, clusterAvailable, startCluster } from './pg-cluster.js';
import { Receiver, Receivers, waitFor } from './webhook-receiver.js';

const secretKey = randomBytes(32);
/** The same queue settings for every worker here: they share one database and one queue. */
const tuning = {
  pollSeconds: 0.5,
  expireSeconds: 2,
  superviseSeconds: 1,
  retry: { delaySeconds: 1, maxDelaySeconds: 2, limit: 50 },
};

let cluster: Cluster;
let receiver: Receiver;
/** A receiver of each test's own: a late delivery of an earlier test's cannot reach it. */
const receivers = new Receivers();
const freshReceiver = () => receivers.fresh();
beforeAll(async () => {
  if (!clusterAvailable) return;
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await receivers.closeAll();
  cluster?.destroy();
});

function instance(opts: { worker: boolean } & Partial<NonNullable<ServerOptions['webhooks']>>) {
  return startServer({
    databaseUrl: cluster.url,
    webhooks: { allowLocal: true, secretKey, ...tuning, ...opts, retry: { ...tuning.retry, ...opts.retry } },
  });
}

/** An owner, a project, and a subscription to `url` for milestone.created. */
async function subscribed(t: TestServer, url = receiver.url) {
  const owner = await userWithKey(t);
  const { data: project } = await api.createProject({ client: owner.client, body: { name: uniqueName('Faulty') } });
  const { data: sub } = await api.createWebhook({
    client: owner.client,
    path: { projectId: project!.id },
    body: { url, events: ['milestone.created'] },
  });
  return { owner, projectId: project!.id, secret: sub!.secret, webhookId: sub!.id };
}

/** A milestone created through the API; its id when the API acknowledged it (201), else undefined. */
async function change(t: TestServer, token: string, projectId: string, title: string): Promise<string | undefined> {
  const res = await fetch(`${t.apiUrl}/projects/${projectId}/milestones`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
    signal: AbortSignal.timeout(15_000),
  }).catch(() => undefined);
  return res?.status === 201 ? ((await res.json()) as { id: string }).id : undefined;
}

/** Waits until every acknowledged milestone arrived, verified; returns how many deliveries that took. */
async function allDelivered(acked: string[], secret: string, timeoutMs = 60_000): Promise<number> {
  await waitFor(async () => {
    const seen = new Set(receiver.events(secret).flatMap((e) => ('milestone' in e.data ? [e.data.milestone.id] : [])));
    return acked.every((id) => seen.has(id)) ? true : undefined;
  }, timeoutMs);
  return receiver.received.length;
}

function workerProcess(options: Partial<typeof tuning> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/webhook-worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: cluster.url,
      SECRET_KEY: secretKey.toString('hex'),
      WORKER_OPTIONS: JSON.stringify({ ...tuning, ...options }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`the worker ended before it was ready (${code})`)));
  });
}

describe.skipIf(!clusterAvailable)('webhook delivery under faults', () => {
  it('a worker killed with SIGKILL mid-delivery: another worker delivers it after', async () => {
    receiver = await freshReceiver();
    const t = await instance({ worker: false });
    let first: ChildProcess | undefined;
    let second: ChildProcess | undefined;
    try {
      const s = await subscribed(t);
      let killed = false;
      // Held open until the first worker is gone: it dies in the middle of these deliveries.
      receiver.answer = () => (killed ? { status: 200 } : 'hang');
      first = await workerProcess();
      const acked: string[] = [];
      for (let i = 0; i < 5; i++) acked.push((await change(t, s.owner.token, s.projectId, `kill ${i}`))!);
      await receiver.until(1);
      first.kill('SIGKILL');
      await once(first, 'exit');
      killed = true;
      second = await workerProcess();
      await allDelivered(acked, s.secret);
    } finally {
      first?.kill('SIGKILL');
      second?.kill('SIGKILL');
      receiver.answer = () => ({ status: 200 });
      await t.close();
    }
  }, 120_000);

  it('a worker killed during a delivery’s last attempt: the delivery is marked failed, not left pending', async () => {
    receiver = await freshReceiver();
    const t = await instance({ worker: false });
    // No retry: the first attempt is the last (the queue's policy is the last started worker's).
    const lastTry = { retry: { ...tuning.retry, limit: 0 } };
    let first: ChildProcess | undefined;
    let second: ChildProcess | undefined;
    try {
      const s = await subscribed(t);
      receiver.answer = () => 'hang';
      first = await workerProcess(lastTry);
      expect(await change(t, s.owner.token, s.projectId, 'last try')).toBeDefined();
      await receiver.until(1);
      first.kill('SIGKILL');
      await once(first, 'exit');
      second = await workerProcess(lastTry);
      // Its job expires (2 s here), pg-boss fails it and hands it to the given-up queue.
      const { items } = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: s.owner.client,
          path: { projectId: s.projectId, webhookId: s.webhookId },
        });
        return data!.items[0]?.state === 'failed' ? data! : undefined;
      }, 30_000);
      expect(items).toHaveLength(1);
      expect(receiver.received).toHaveLength(1);
    } finally {
      first?.kill('SIGKILL');
      second?.kill('SIGKILL');
      receiver.answer = () => ({ status: 200 });
      await t.close();
    }
  }, 120_000);

  it('PostgreSQL stopped, then frozen, while events are pending: every acknowledged change arrives', async () => {
    receiver = await freshReceiver();
    const t = await instance({ worker: true });
    try {
      const s = await subscribed(t);
      const acked: string[] = [];
      for (let i = 0; i < 16; i++) {
        if (i === 5) {
          cluster.stop();
          // Writes meanwhile are refused (503), and not counted.
          expect(await change(t, s.owner.token, s.projectId, 'while stopped')).toBeUndefined();
          await new Promise((r) => setTimeout(r, 2000));
          cluster.start();
        }
        if (i === 10) {
          cluster.freeze();
          await new Promise((r) => setTimeout(r, 3000));
          cluster.thaw();
        }
        const id = await change(t, s.owner.token, s.projectId, `outage ${i}`);
        if (id) acked.push(id);
      }
      expect(acked.length).toBeGreaterThanOrEqual(12);
      await allDelivered(acked, s.secret);
    } finally {
      cluster.thaw();
      await t.close();
    }
  }, 120_000);

  it('a receiver down for a (shortened) day, then back: all arrive, the subscription stays on', async () => {
    receiver = await freshReceiver();
    const t = await instance({ worker: true });
    const away = new Receiver();
    await away.start();
    const port = away.port;
    try {
      const s = await subscribed(t, away.url);
      await away.close(); // connection refused from now on
      const acked: string[] = [];
      for (let i = 0; i < 5; i++) acked.push((await change(t, s.owner.token, s.projectId, `away ${i}`))!);
      await new Promise((r) => setTimeout(r, 6000));
      const failing = await api.getWebhook({
        client: s.owner.client,
        path: { projectId: s.projectId, webhookId: s.webhookId },
      });
      expect(failing.data).toMatchObject({ status: 'active' });
      expect(failing.data!.failingSince).not.toBeNull();
      await away.start(port);
      await waitFor(async () => {
        const ids = new Set(away.events(s.secret).flatMap((e) => ('milestone' in e.data ? [e.data.milestone.id] : [])));
        return acked.every((id) => ids.has(id)) ? true : undefined;
      }, 60_000);
      const healthy = await api.getWebhook({
        client: s.owner.client,
        path: { projectId: s.projectId, webhookId: s.webhookId },
      });
      expect(healthy.data).toMatchObject({ status: 'active', failingSince: null });
    } finally {
      await away.close().catch(() => undefined);
      await t.close();
    }
  }, 120_000);

  it('a receiver back after an outage: what waited for it arrives at once, in the order of its sequence', async () => {
    receiver = await freshReceiver();
    // Back-off up to 30 s: each delivery, made at another moment of the outage, waits for its own retry.
    const t = await instance({ worker: true, retry: { delaySeconds: 1, maxDelaySeconds: 30 } });
    const away = new Receiver();
    await away.start();
    const port = away.port;
    try {
      const s = await subscribed(t, away.url);
      await away.close();
      const acked: string[] = [];
      for (let i = 0; i < 10; i++) {
        acked.push((await change(t, s.owner.token, s.projectId, `while away ${i}`))!);
        await new Promise((r) => setTimeout(r, 1200));
      }
      await new Promise((r) => setTimeout(r, 4000));
      await away.start(port);
      const back = Date.now();
      await waitFor(async () => {
        const ids = new Set(away.events(s.secret).flatMap((e) => ('milestone' in e.data ? [e.data.milestone.id] : [])));
        return acked.every((id) => ids.has(id)) ? true : undefined;
      }, 90_000);
      const arrivals = away.received.map((r, i) => ({
        at: r.at,
        sequence: Number(away.events(s.secret)[i]!.sequence),
      }));
      const first = arrivals[0]!.at;
      const last = Math.max(...arrivals.map((a) => a.at));
      // Once the first one is taken, the rest follow at once: not each after its own back-off.
      expect(last - first, `first after ${first - back} ms, all after ${last - back} ms`).toBeLessThan(3000);
      const after = arrivals.slice(1).map((a) => a.sequence);
      expect(after).toEqual([...after].sort((a, b) => a - b));
      expect(new Set(arrivals.map((a) => a.sequence)).size).toBe(10);
    } finally {
      await away.close().catch(() => undefined);
      await t.close();
    }
  }, 150_000);

  it('a subscription failing for longer than the limit is disabled, and says why', async () => {
    const t = await instance({ worker: true, retry: { disableAfterMs: 2000 } });
    try {
      const s = await subscribed(t, 'http://127.0.0.1:9/hook');
      await change(t, s.owner.token, s.projectId, 'nobody listens');
      const disabled = await waitFor(async () => {
        const { data } = await api.getWebhook({
          client: s.owner.client,
          path: { projectId: s.projectId, webhookId: s.webhookId },
        });
        return data?.status === 'disabled' ? data : undefined;
      }, 30_000);
      expect(disabled.active).toBe(false);
      expect(disabled.disabledReason).toMatch(/failed/);
      const log = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: s.owner.client,
          path: { projectId: s.projectId, webhookId: s.webhookId },
        });
        return data?.items[0]?.state === 'failed' ? data.items[0] : undefined;
      });
      expect(log.log.at(-1)!.error).toMatch(/could not connect/);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('a receiver slower than the deadline: the attempt times out, is logged, and is tried again', async () => {
    receiver = await freshReceiver();
    const t = await instance({ worker: true, attemptTimeoutMs: 1000 });
    const seen = new Set<string>();
    receiver.answer = (_n, id) => {
      const firstTime = !seen.has(id);
      seen.add(id);
      return { status: 200, delayMs: firstTime ? 1500 : 300 };
    };
    try {
      const s = await subscribed(t);
      const id = (await change(t, s.owner.token, s.projectId, 'slowly'))!;
      await allDelivered([id], s.secret);
      const log = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: s.owner.client,
          path: { projectId: s.projectId, webhookId: s.webhookId },
        });
        return data?.items[0]?.state === 'delivered' ? data.items[0] : undefined;
      });
      expect(log.log[0]).toMatchObject({ statusCode: null, error: 'no answer within 1 seconds' });
      expect(log.log.at(-1)!.statusCode).toBe(200);
      expect(log.log.at(-1)!.durationMs).toBeGreaterThanOrEqual(250);
    } finally {
      receiver.answer = () => ({ status: 200 });
      await t.close();
    }
  }, 60_000);

  it('two instances running the worker: each delivery once, never two of one event at the same moment', async () => {
    receiver = await freshReceiver();
    receiver.answer = () => ({ status: 200, delayMs: 200 });
    const [a, b] = [await instance({ worker: true }), await instance({ worker: true })];
    try {
      const s = await subscribed(a);
      const acked: string[] = [];
      for (let i = 0; i < 20; i++) acked.push((await change(i % 2 ? a : b, s.owner.token, s.projectId, `two ${i}`))!);
      await allDelivered(acked, s.secret);
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.overlaps).toBe(0);
      expect(receiver.received).toHaveLength(20);
    } finally {
      receiver.answer = () => ({ status: 200 });
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);
});
