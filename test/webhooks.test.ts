import { createServer } from 'node:http';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  databaseOfItsOwn,
  startServer,
  userWithKey,
  uniqueName,
  raw,
  keyFor,
  type TestServer,
  type TestUser,
} from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { fakeDns } from './fake-dns.js';
import { signedUpBrowser } from './cookie-browser.js';
import { User } from '../src/users/user.entity.js';
import { createProject } from '../src/projects/projects.service.js';
import type { Actor } from '../src/kernel/actor.js';
import type * as types from '../codegen/generated/api/types.gen.js';
import { Receiver, Receivers, waitFor } from './webhook-receiver.js';
import { postEvent } from '../src/webhooks/deliver.js';

let t: TestServer;
let ada: TestUser;
let grace: TestUser;
let receiver: Receiver;
beforeAll(async () => {
  t = await startServer({
    webhooks: { worker: true, allowLocal: true, retry: { delaySeconds: 1, maxDelaySeconds: 1, limit: 2 } },
  });
  [ada, grace] = [await userWithKey(t), await userWithKey(t)];
  receiver = await freshReceiver();
});

/** A receiver of each test's own: a late delivery of an earlier test's cannot reach it. */
const receivers = new Receivers();
const freshReceiver = () => receivers.fresh();
afterAll(async () => {
  await receivers.closeAll();
  await t?.close();
});

async function project(client = ada.client): Promise<string> {
  const { data } = await api.createProject({ client, body: { name: uniqueName('Hooked') } });
  return data!.id;
}

async function subscribe(projectId: string, body: Partial<types.WebhookSubscriptionCreate> = {}) {
  const res = await api.createWebhook({
    client: ada.client,
    path: { projectId },
    body: {
      url: receiver.url,
      events: ['milestone.created', 'milestone.updated', 'milestone.deleted', 'build_log.created'],
      ...body,
    },
  });
  expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
  return res.data!;
}

describe('webhook deliveries', () => {
  it('pushes roadmap and build-log changes, signed, in the contract shape, each change once', async () => {
    receiver = await freshReceiver();
    const p = await project();
    const sub = await subscribe(p);
    expect(sub.secret).toMatch(/^whsec_/);
    const a = await api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title: 'A' } });
    const b = await api.createMilestone({
      client: ada.client,
      path: { projectId: p },
      body: { title: 'B', description: 'x'.repeat(1500) },
    });
    await api.updateMilestone({
      client: ada.client,
      path: { projectId: p, milestoneId: b.data!.id },
      body: { position: 1 },
    });
    await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: p, title: 'Day 1', body: 'cut gears' },
    });
    await api.deleteMilestone({ client: ada.client, path: { projectId: p, milestoneId: a.data!.id } });
    // created A, created B, B moved 2→1, A shifted 1→2, build log, A deleted
    await receiver.until(6);
    const events = receiver.events(sub.secret);
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        'build_log.created',
        'milestone.created',
        'milestone.created',
        'milestone.deleted',
        'milestone.updated',
        'milestone.updated',
      ].sort(),
    );
    for (const e of events) expect(e.projectId).toBe(p);
    expect(new Set(events.map((e) => e.id)).size).toBe(6);
    const moved = events.find(
      (e) => e.type === 'milestone.updated' && 'milestone' in e.data && e.data.milestone.id === b.data!.id,
    )!;
    expect(moved.data).toMatchObject({ previousPosition: 2, changed: ['position'], truncated: ['description'] });
    const movedData = moved.data as { milestone: types.Milestone; url: string };
    expect(movedData.milestone.position).toBe(1);
    expect(movedData.milestone.description).toHaveLength(1000);
    expect(movedData.url).toMatch(new RegExp(`/api/v1/projects/${p}/milestones/${b.data!.id}$`));
    // Per resource, a later change has a higher sequence.
    const forA = events
      .filter((e) => 'milestone' in e.data && e.data.milestone.id === a.data!.id)
      .map((e) => [e.type, e.sequence]);
    expect(forA.map(([type]) => type)).toEqual(['milestone.created', 'milestone.updated', 'milestone.deleted']);
    expect(forA.map(([, s]) => s)).toEqual([...forA.map(([, s]) => s)].sort((x, y) => Number(x) - Number(y)));
  });

  it('pushes a project’s own changes and a build log’s edit and delete; a member removed twice at once is one event', async () => {
    receiver = await freshReceiver();
    const p = await project();
    const sub = await subscribe(p, {
      events: [
        'project.updated',
        'project.member_added',
        'project.member_removed',
        'build_log.updated',
        'build_log.deleted',
      ],
    });
    const log = await api.createPost({
      client: ada.client,
      body: { kind: 'build_log', projectId: p, title: 'Day 1', body: 'cut gears' },
    });
    await api.updateProject({ client: ada.client, path: { projectId: p }, body: { tagline: 'Gears, cut' } });
    const username = grace.user.username;
    const added = await api.addProjectMember({ client: ada.client, path: { projectId: p }, body: { username } });
    expect(added.response?.status, JSON.stringify(added.error)).toBe(201);
    // The owner and the member herself remove her at the same moment: one removal, one event.
    const removals = await Promise.all([
      api.removeProjectMember({ client: ada.client, path: { projectId: p, username } }),
      api.removeProjectMember({ client: grace.client, path: { projectId: p, username } }),
    ]);
    expect(removals.filter((r) => r.response?.status === 204)).not.toHaveLength(0);
    await api.updatePost({ client: ada.client, path: { postId: log.data!.id }, body: { body: 'cut more gears' } });
    await api.deletePost({ client: ada.client, path: { postId: log.data!.id } });
    await receiver.until(5);
    // Anything more would have come with the last one; the relay runs every 25 ms at most.
    await new Promise((r) => setTimeout(r, 1000));
    const events = receiver.events(sub.secret);
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        'build_log.deleted',
        'build_log.updated',
        'project.member_added',
        'project.member_removed',
        'project.updated',
      ].sort(),
    );
    const byType = Object.fromEntries(events.map((e) => [e.type, e.data as Record<string, unknown>]));
    expect(byType['project.updated']).toMatchObject({
      project: { id: p, tagline: 'Gears, cut' },
      changed: ['tagline'],
    });
    expect(byType['project.member_added']).toMatchObject({ member: { user: { username } } });
    expect(byType['project.member_removed']).toMatchObject({ member: { user: { username } } });
    expect(byType['build_log.updated']).toMatchObject({ buildLog: { id: log.data!.id, body: 'cut more gears' } });
    expect(byType['build_log.deleted']).toMatchObject({ buildLog: { id: log.data!.id } });
    const forLog = events.filter((e) => e.type.startsWith('build_log.')).map((e) => Number(e.sequence));
    expect(forLog[0]).toBeLessThan(forLog[1]!);
  });

  // An outside transaction holds the project's row lock while two updates arrive: on the embedded
  // database the test cannot open a second connection, so this runs on PostgreSQL.
  it.skipIf(!process.env.DATABASE_URL)(
    'two updates of a project at once: the later event carries both changes, each names its own',
    async () => {
      receiver = await freshReceiver();
      const p = await project();
      const sub = await subscribe(p, { events: ['project.updated'] });
      const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select id from projects where id = $1 for update', [p]);
        const { rows: me } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
        const updates = [
          api.updateProject({ client: ada.client, path: { projectId: p }, body: { name: 'Renamed' } }),
          api.updateProject({ client: ada.client, path: { projectId: p }, body: { tagline: 'Retagged' } }),
        ];
        await waitFor(async () => {
          // Inside a transaction the activity view is read once; each look needs a new one. The
          // first update waits for the holder, the second for the first.
          await holder.query('select pg_stat_clear_snapshot()');
          const { rows } = await holder.query<{ n: number }>(
            `with first as (select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid)))
             select count(*)::int as n from pg_stat_activity a
             where a.pid in (select pid from first) or exists (select 1 from first f where f.pid = any(pg_blocking_pids(a.pid)))`,
            [me[0]!.pid],
          );
          return rows[0]!.n >= 2 || undefined;
        });
        await holder.query('commit');
        for (const res of await Promise.all(updates)) expect(res.response?.status).toBe(200);
      } finally {
        await holder.end();
      }
      await receiver.until(2);
      const [first, last] = receiver
        .events(sub.secret)
        .sort((x, y) => Number(x.sequence) - Number(y.sequence))
        .map((e) => e.data as { project: types.Project; changed: string[] });
      expect(last!.project).toMatchObject({ name: 'Renamed', tagline: 'Retagged' });
      expect([first!.changed, last!.changed].sort()).toEqual([['name'], ['tagline']]);
    },
  );

  it('the same change made through MCP sends the same event', async () => {
    receiver = await freshReceiver();
    const p = await project();
    const sub = await subscribe(p, { events: ['milestone.created'] });
    const res = await raw(t, 'POST', '/mcp', {
      token: ada.token,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_milestone', arguments: { projectId: p, title: 'From an agent' } },
      },
    });
    expect(res.status).toBe(200);
    await receiver.until(1);
    const [event] = receiver.events(sub.secret);
    expect(event).toMatchObject({ type: 'milestone.created', data: { milestone: { title: 'From an agent' } } });
  });

  it('retries a failing receiver with the same webhook-id, and logs every attempt', async () => {
    receiver = await freshReceiver();
    receiver.answer = (n) => ({ status: n === 1 ? 503 : 200 });
    try {
      const p = await project();
      const sub = await subscribe(p, { events: ['milestone.created'] });
      await api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title: 'Retried' } });
      await receiver.until(2);
      const [first, second] = receiver.received;
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      expect(receiver.events(sub.secret)).toHaveLength(2);
      const log = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: ada.client,
          path: { projectId: p, webhookId: sub.id },
        });
        return data!.items[0]?.state === 'delivered' ? data! : undefined;
      });
      expect(log.items[0]).toMatchObject({ eventType: 'milestone.created', attempts: 2, manual: false });
      expect(log.items[0]!.log.map((a) => a.statusCode)).toEqual([503, 200]);
      expect(log.items[0]!.log[1]!.responseExcerpt).toBe('thanks');
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('keeps its connection to a receiver; one the receiver drops as it is reused is sent again at once on a new one', async () => {
    receiver = await freshReceiver();
    // The second request arrives on the first one's kept connection, which the receiver closes unanswered.
    receiver.answer = (n) => (n === 2 ? 'drop' : { status: 200 });
    try {
      const p = await project();
      const sub = await subscribe(p, { events: ['milestone.created'] });
      for (const title of ['Kept', 'Dropped', 'After'])
        await api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title } });
      await receiver.until(4);
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(ids[2]).toBe(ids[1]);
      expect(new Set(ids).size).toBe(3);
      // One connection for the first two, one of its own for the resend, a new kept one for the last.
      expect(receiver.connections).toBe(3);
      const log = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: ada.client,
          path: { projectId: p, webhookId: sub.id },
        });
        return data!.items.length === 3 && data!.items.every((d) => d.state === 'delivered') ? data! : undefined;
      });
      // The dropped connection is not an attempt that failed: each delivery took one.
      expect(log.items.map((d) => [d.attempts, d.log.map((a) => a.statusCode)])).toEqual([
        [1, [200]],
        [1, [200]],
        [1, [200]],
      ]);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('pings, redelivers with the same id, and rotates the secret with both signatures during the overlap', async () => {
    receiver = await freshReceiver();
    const p = await project();
    const sub = await subscribe(p);
    const ping = await api.pingWebhook({ client: ada.client, path: { projectId: p, webhookId: sub.id } });
    expect(ping.response?.status).toBe(201);
    await receiver.until(1);
    expect(receiver.events(sub.secret)[0]).toMatchObject({ type: 'ping', data: { subscriptionId: sub.id } });
    const again = await api.redeliverWebhook({
      client: ada.client,
      path: { projectId: p, webhookId: sub.id, deliveryId: ping.data!.id },
    });
    expect(again.response?.status).toBe(201);
    await receiver.until(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    // The redelivery keeps the event's number for this subscription.
    expect(receiver.events(sub.secret).map((e) => e.sequence)).toEqual([1, 1]);

    const rotated = await api.rotateWebhookSecret({
      client: ada.client,
      path: { projectId: p, webhookId: sub.id },
      body: { overlapHours: 1 },
    });
    expect(rotated.data!.previousSecretValidUntil).not.toBeNull();
    await api.pingWebhook({ client: ada.client, path: { projectId: p, webhookId: sub.id } });
    await receiver.until(3);
    const last = receiver.received[2]!;
    expect(last.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(sub.secret).verify(last.body, last.headers)).not.toThrow();
    expect(() => new Webhook(rotated.data!.secret).verify(last.body, last.headers)).not.toThrow();
  });
});

describe('webhook sequences', () => {
  it('numbers each subscription’s events 1, 2, 3…, gap-free, whatever other projects do meanwhile', async () => {
    const [atP, atQ] = [await freshReceiver(), await freshReceiver()];
    const [p, q] = [await project(), await project()];
    const [subP, subQ] = [await subscribe(p, { url: atP.url }), await subscribe(q, { url: atQ.url })];
    // Interleaved changes of two projects, and a ping: each receiver's numbers are its own.
    for (let i = 0; i < 3; i++)
      for (const projectId of [p, q])
        await api.createMilestone({ client: ada.client, path: { projectId }, body: { title: `M${i}` } });
    await api.pingWebhook({ client: ada.client, path: { projectId: p, webhookId: subP.id } });
    await atP.until(4);
    await atQ.until(3);
    const numbers = (r: Receiver, secret: string) =>
      r
        .events(secret)
        .map((e) => Number(e.sequence))
        .sort((a, b) => a - b);
    expect(numbers(atP, subP.secret)).toEqual([1, 2, 3, 4]);
    expect(numbers(atQ, subQ.secret)).toEqual([1, 2, 3]);
  });
});

describe('webhook subscriptions', () => {
  it('refuses bad input with a problem and stores nothing', async () => {
    const p = await project();
    const bad: [unknown, number][] = [
      [{ url: 'ftp://example.com/x', events: ['milestone.created'] }, 422],
      [{ url: 'https://u:p@example.com/x', events: ['milestone.created'] }, 422],
      [{ url: 'https://example.com/x', events: ['milestone.exploded'] }, 400],
      [{ url: 'https://example.com/x', events: [] }, 400],
      [{ url: 'https://example.com/x', events: ['milestone.created'], secret: 'whsec_mine' }, 400],
    ];
    for (const [body, status] of bad) {
      const res = await raw(t, 'POST', `/projects/${p}/webhooks`, { token: ada.token, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    // Its answer holds a secret never stored, so it cannot be replayed: a retry would make a second one.
    const good = { url: 'https://example.com/x', events: ['milestone.created'] };
    for (const _ of [1, 2]) {
      const once = await raw(t, 'POST', `/projects/${p}/webhooks`, {
        token: ada.token,
        body: good,
        headers: { 'idempotency-key': 'same-key' },
      });
      expect(once.status).toBe(400);
      expect((once.json as types.Problem).errors).toEqual([
        { path: '/headers/idempotency-key', message: 'this operation takes no Idempotency-Key' },
      ]);
      expect((once.json as types.Problem).detail).toMatch(/^createWebhook takes no Idempotency-Key/);
    }
    const { data } = await api.listWebhooks({ client: ada.client, path: { projectId: p } });
    expect(data!.items).toEqual([]);
  });

  it('refuses private and loopback addresses unless the operator allows local URLs', async () => {
    const strict = await startServer();
    try {
      const owner = await userWithKey(strict);
      const { data: proj } = await api.createProject({ client: owner.client, body: { name: uniqueName('Strict') } });
      for (const url of [
        'https://127.0.0.1/x',
        'https://10.1.2.3/x',
        'https://169.254.169.254/latest',
        'https://localhost/x',
        'http://example.com/x',
        'https://[::1]/x',
        'https://[::ffff:127.0.0.1]/x',
        'https://[fe80::1]/x',
      ]) {
        const res = await raw(strict, 'POST', `/projects/${proj!.id}/webhooks`, {
          token: owner.token,
          body: { url, events: ['milestone.created'] },
        });
        expect(res.status, url).toBe(422);
        expect((res.json as types.Problem).errors?.[0]?.path).toBe('/body/url');
      }
      // A public address is taken (an IPv4 literal: no DNS here).
      const ok = await raw(strict, 'POST', `/projects/${proj!.id}/webhooks`, {
        token: owner.token,
        body: { url: 'https://203.0.113.10/x', events: ['milestone.created'] },
      });
      expect(ok.status).toBe(201);
    } finally {
      await strict.close();
    }
  });

  it('is the owner’s alone: 404 to a member and to anyone else, and for another project’s webhook', async () => {
    const p = await project();
    const sub = await subscribe(p);
    await api.addProjectMember({ client: ada.client, path: { projectId: p }, body: { username: grace.user.username } });
    const byMember = [
      await api.getWebhook({ client: grace.client, path: { projectId: p, webhookId: sub.id } }),
      await api.listWebhooks({ client: grace.client, path: { projectId: p } }),
      await api.listWebhookDeliveries({ client: grace.client, path: { projectId: p, webhookId: sub.id } }),
      await api.pingWebhook({ client: grace.client, path: { projectId: p, webhookId: sub.id } }),
      await api.deleteWebhook({ client: grace.client, path: { projectId: p, webhookId: sub.id } }),
    ];
    for (const res of byMember) expect(res.response?.status).toBe(404);
    expect(
      (await api.getWebhook({ client: ada.client, path: { projectId: p, webhookId: sub.id } })).response?.status,
    ).toBe(200);
    const priv = await api.createProject({
      client: ada.client,
      body: { name: uniqueName('Private'), visibility: 'private' },
    });
    const stranger = await api.listWebhooks({ client: grace.client, path: { projectId: priv.data!.id } });
    expect(stranger.response?.status).toBe(404);
    const other = await project();
    const elsewhere = await api.getWebhook({ client: ada.client, path: { projectId: other, webhookId: sub.id } });
    expect(elsewhere.response?.status).toBe(404);
    const listed = await api.listWebhooks({ client: ada.client, path: { projectId: p } });
    expect(listed.data!.items.map((s) => s.id)).toEqual([sub.id]);
    expect(JSON.stringify(listed.data)).not.toContain('whsec_');
  });

  it('holds at most 10 per project', async () => {
    const p = await project();
    for (let i = 0; i < 10; i++) await subscribe(p);
    const res = await raw(t, 'POST', `/projects/${p}/webhooks`, {
      token: ada.token,
      body: { url: receiver.url, events: ['milestone.created'] },
    });
    expect(res.status).toBe(422);
  });

  it('pauses, and a paused subscription receives nothing', async () => {
    receiver = await freshReceiver();
    const p = await project();
    const sub = await subscribe(p, { events: ['milestone.created'] });
    const paused = await api.updateWebhook({
      client: ada.client,
      path: { projectId: p, webhookId: sub.id },
      body: { active: false },
    });
    expect(paused.data).toMatchObject({ active: false, status: 'paused' });
    await api.createMilestone({ client: ada.client, path: { projectId: p }, body: { title: 'Unheard' } });
    await api.pingWebhook({ client: ada.client, path: { projectId: p, webhookId: sub.id } });
    await receiver.until(1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.events(sub.secret).map((e) => e.type)).toEqual(['ping']);
  });
});

describe('the SSRF guard, with names a DNS server of the test resolves', () => {
  it('refuses a name that resolves to a private address, and re-checks at delivery: a name rebound to loopback gets nothing sent', async () => {
    const names = new Map([
      ['inside.test', '10.0.0.5'],
      ['metadata.test', '169.254.169.254'],
      ['rebinding.test', '203.0.113.10'],
    ]);
    const dns = await fakeDns(names);
    // A database of its own: on a shared one, the file's other worker (which allows local
    // addresses and resolves with the system) could take this server's deliveries.
    const own = await databaseOfItsOwn('shipyard_dns');
    const strict = await startServer({
      databaseUrl: own.databaseUrl,
      webhooks: { worker: true, resolve: dns.resolve, retry: { limit: 0 } },
    });
    // Anything that connects here (the address the name is rebound to) is a delivery the guard let out.
    let connections = 0;
    const target = createServer(() => undefined).on('connection', () => connections++);
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const port = (target.address() as AddressInfo).port;
    try {
      const owner = await userWithKey(strict);
      const { data: proj } = await api.createProject({ client: owner.client, body: { name: uniqueName('Dns') } });
      const create = (url: string) =>
        raw(strict, 'POST', `/projects/${proj!.id}/webhooks`, {
          token: owner.token,
          body: { url, events: ['milestone.created'] },
        });
      for (const host of ['inside.test', 'metadata.test']) {
        const refused = await create(`https://${host}/hook`);
        expect(refused.status, host).toBe(422);
        expect((refused.json as types.Problem).detail).toContain('not a public address');
      }
      expect((await create('https://nowhere.test/hook')).status).toBe(422);
      const saved = await create(`https://rebinding.test:${port}/hook`);
      expect(saved.status).toBe(201);
      names.set('rebinding.test', '127.0.0.1');
      await api.createMilestone({ client: owner.client, path: { projectId: proj!.id }, body: { title: 'Rebound' } });
      const log = await waitFor(async () => {
        const { data } = await api.listWebhookDeliveries({
          client: owner.client,
          path: { projectId: proj!.id, webhookId: (saved.json as { id: string }).id },
        });
        return data!.items[0]?.state === 'failed' ? data!.items[0] : undefined;
      });
      expect(log.log[0]!.statusCode).toBeNull();
      expect(log.log[0]!.error).toContain('not a public address');
      expect(log.log[0]!.error).not.toContain('127.0.0.1');
      expect(connections).toBe(0);
    } finally {
      target.close();
      await strict.close();
      await own.drop();
      await dns.close();
    }
  });
});

describe('kept connections', () => {
  it('carry a delivery only to the address checked for it', async () => {
    // Two receivers on one port at two loopback addresses: one URL, its name resolved to each in turn.
    const [a, b] = [new Receiver(), new Receiver()];
    await a.start(0, '127.0.0.1');
    await b.start(a.port, '127.0.0.2');
    try {
      const url = new URL(`http://hooks.test:${a.port}/hook`);
      const send = (address: string) => postEvent(url, { address, family: 4 }, '{"type":"ping"}', {});
      for (const address of ['127.0.0.1', '127.0.0.2', '127.0.0.1'])
        expect((await send(address)).statusCode, address).toBe(200);
      expect([a.received.length, b.received.length]).toEqual([2, 1]);
      // The first connection was kept for the third request.
      expect([a.connections, b.connections]).toEqual([1, 1]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('Settings → Webhooks', () => {
  it('lists the owner’s subscriptions with their deliveries, and Redeliver sends one again', async () => {
    receiver = await freshReceiver();
    const { b, username } = await signedUpBrowser(t.baseUrl);
    const em = t.db.orm.em.fork();
    const user = await em.findOneOrFail(User, { username });
    const actor: Actor = { userId: user.id, via: 'session', scopes: [] };
    const owned = await createProject(em, actor, { name: uniqueName('Web hooks') });
    const token = await keyFor(t, user.id, ['projects.write']);
    const created = await raw(t, 'POST', `/projects/${owned.id}/webhooks`, {
      token,
      body: { url: receiver.url, events: ['milestone.created'], description: 'Deploy bot' },
    });
    expect(created.status).toBe(201);
    await raw(t, 'POST', `/projects/${owned.id}/milestones`, { token, body: { title: 'Seen on the page' } });
    await receiver.until(1);
    const shown = await waitFor(async () => {
      const res = await b.get('/settings/webhooks');
      return res.text.includes('delivered') ? res : undefined;
    });
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(receiver.url);
    expect(shown.text).toContain('milestone.created');
    expect(shown.text).toContain('Deploy bot');
    const deliveryId = /name="deliveryId" value="([^"]+)"/.exec(shown.text)![1]!;
    const again = await b.post('/settings/webhooks/redeliver', {
      _csrf: b.csrf(),
      projectId: owned.id,
      webhookId: (created.json as { id: string }).id,
      deliveryId,
    });
    expect(again.status).toBe(200);
    expect(again.text).toContain('Sent again');
    await receiver.until(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    // Another person's delivery is not theirs to send.
    const other = await signedUpBrowser(t.baseUrl);
    await other.b.get('/settings/webhooks');
    const refused = await other.b.post('/settings/webhooks/redeliver', {
      _csrf: other.b.csrf(),
      projectId: owned.id,
      webhookId: (created.json as { id: string }).id,
      deliveryId,
    });
    expect([403, 404]).toContain(refused.status);
    expect(receiver.received).toHaveLength(2);
  });
});
