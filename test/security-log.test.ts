/**
 * The security log and each key's use, from outside: writes through REST (the SDK) and MCP (the
 * MCP SDK's client) appear with the right key, channel, client, address and resource; a key seen
 * from a new address or client is marked; the owner reads, filters and downloads the log on the
 * web; nothing secret is ever stored.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { reads } from '../src/db/reads.js';
import { UUID } from 'uuidv7';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { createClient } from '../codegen/generated/api/client/index.js';
import { uniqueName, userWithKey, useServer } from './harness.js';
import { Browser, signedUpBrowser } from './cookie-browser.js';
import { SecurityEvent } from '../src/security-log/security-event.entity.js';
import { KeySighting } from '../src/keys/key-sighting.entity.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { User } from '../src/users/user.entity.js';
import { hashToken } from '../src/keys/tokens.js';
import { createKey } from '../src/keys/keys.service.js';
import { recordSecurityEvent, sweepSecurityLog } from '../src/security-log/security-log.service.js';

// Behind a proxy on loopback: each test says which address its calls come from.
const { t } = useServer({ trustProxy: ['loopback'] });

const WRITER = ['projects.read', 'projects.write', 'content.write'] as const;

/** The SDK as an integrator's script uses it, from `address`, naming itself `agent`. */
const sdkFrom = (token: string, address: string, agent = 'integrator-script/2.0') =>
  createClient({ baseUrl: t.apiUrl, auth: token, headers: { 'user-agent': agent, 'x-forwarded-for': address } });

const entries = (userId: string, kind?: string) =>
  t.db.orm.em.fork().find(SecurityEvent, kind ? { user: userId, kind } : { user: userId }, { orderBy: { id: 'asc' } });

/** Every stored row about the user's keys and log, as text: where a secret would show if it were kept. */
async function storedText(userId: string): Promise<string> {
  const em = t.db.orm.em.fork();
  const keys = await em.find(ApiKey, { user: userId });
  const sightings = await em.find(KeySighting, { key: { $in: keys.map((k) => k.id) } });
  return JSON.stringify([await entries(userId), sightings]);
}

describe('writes made with a key', () => {
  it('records a REST write with its key, channel, client, address and resource, named, and nothing secret', async () => {
    const { user, token } = await userWithKey(t, [...WRITER]);
    const client = sdkFrom(token, '203.0.113.7');
    const projectName = uniqueName('Logged');
    const project = await api.createProject({ client, body: { name: projectName }, throwOnError: true });
    const title = `private plan ${uniqueName()}`;
    const description = `the body of it ${uniqueName()}`;
    const milestone = await api.createMilestone({
      client,
      path: { projectId: project.data.id },
      body: { title, description },
      throwOnError: true,
    });
    await api.listMilestones({ client, path: { projectId: project.data.id }, throwOnError: true });
    await api.updateMilestone({
      client,
      path: { projectId: project.data.id, milestoneId: milestone.data.id },
      body: { title: 'Renamed' },
      throwOnError: true,
    });
    await api.deleteMilestone({
      client,
      path: { projectId: project.data.id, milestoneId: milestone.data.id },
      throwOnError: true,
    });

    const writes = await entries(user.id, 'key.write');
    expect(writes.map((w) => w.operation)).toEqual([
      'createProject',
      'createMilestone',
      'updateMilestone',
      'deleteMilestone',
    ]);
    const [first, made, renamed, deleted] = writes;
    // Each names what it changed, as it was then, beside its path.
    expect(first!.resourceName).toBe(projectName);
    expect(made).toMatchObject({
      keyName: 'test',
      channel: 'rest',
      client: 'integrator-script/2.0',
      address: '203.0.113.7',
      resource: `/api/v1/projects/${project.data.id}/milestones/${milestone.data.id}`,
      resourceName: title,
    });
    expect([renamed!.resourceName, deleted!.resourceName]).toEqual(['Renamed', 'Renamed']);
    const key = await t.db.orm.em.fork().findOneOrFail(ApiKey, { user: user.id });
    expect(made!.keyId).toBe(key.id);

    const stored = await storedText(user.id);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice('shipyard_pat_'.length, -4));
    expect(stored).not.toContain(hashToken(token));
    // A name, never a body.
    expect(stored).not.toContain(description);
  });

  it('records an MCP write with the client the agent named at initialize; reads are not writes', async () => {
    const { user, token } = await userWithKey(t, [...WRITER]);
    const project = await api.createProject({
      client: sdkFrom(token, '203.0.113.20'),
      body: { name: uniqueName('Agent') },
      throwOnError: true,
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${t.apiUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': '198.51.100.30' } },
    });
    const agent = new McpClient({ name: 'roadmap-agent', version: '4.5.0' });
    await agent.connect(transport);
    try {
      const made = await agent.callTool({
        name: 'create_milestone',
        arguments: { projectId: project.data.id, title: 'Ship the log' },
      });
      expect(made.isError).toBeFalsy();
      const id = (made.structuredContent as { id: string }).id;
      await agent.callTool({ name: 'get_roadmap', arguments: { projectId: project.data.id } });
      const done = await agent.callTool({
        name: 'update_milestone',
        arguments: { projectId: project.data.id, milestoneId: id, status: 'done' },
      });
      expect(done.isError).toBeFalsy();

      const gone = await agent.callTool({
        name: 'delete_milestone',
        arguments: { projectId: project.data.id, milestoneId: id },
      });
      expect(gone.isError).toBeFalsy();

      const writes = (await entries(user.id, 'key.write')).filter((w) => w.channel === 'mcp');
      expect(writes.map((w) => w.operation)).toEqual(['createMilestone', 'updateMilestone', 'deleteMilestone']);
      for (const write of writes) {
        expect(write).toMatchObject({
          keyName: 'test',
          client: 'roadmap-agent 4.5.0',
          address: '198.51.100.30',
          resourceName: 'Ship the log',
        });
        expect(write.resource).toContain(id);
      }
    } finally {
      await agent.close();
    }
    await t.keyUse.flush();
    const key = await t.db.orm.em.fork().findOneOrFail(ApiKey, { user: user.id });
    expect(key).toMatchObject({ lastChannel: 'mcp', lastClient: 'roadmap-agent 4.5.0' });
  });

  it('records each of many writes made at once, each before it is answered', async () => {
    const { user, token } = await userWithKey(t, [...WRITER]);
    const client = sdkFrom(token, '203.0.113.9');
    const project = await api.createProject({ client, body: { name: uniqueName('Busy') }, throwOnError: true });
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api.createMilestone({
          client,
          path: { projectId: project.data.id },
          body: { title: `m${i}` },
          throwOnError: true,
        }),
      ),
    );
    // Read as soon as the last answer came: nothing is written after it.
    const logged = (await entries(user.id, 'key.write')).map((w) => w.resource);
    expect(logged).toHaveLength(31);
    expect(new Set(logged)).toEqual(
      new Set([
        `/api/v1/projects/${project.data.id}`,
        ...made.map((m) => `/api/v1/projects/${project.data.id}/milestones/${m.data.id}`),
      ]),
    );
  });

  it('writes the entries of one moment in one statement, and an entry that cannot be written fails only itself', async () => {
    const { user } = await userWithKey(t, [...WRITER]);
    const em = t.db.orm.em.fork();
    const entry = (keyId: string | null, i: number) =>
      recordSecurityEvent(em, { userId: user.id, kind: 'key.write', keyId, operation: `op${i}`, resource: `/r/${i}` });
    // The first goes at once; the others wait for it and go together: two transactions in all.
    await Promise.all(Array.from({ length: 20 }, (_, i) => entry(null, i)));
    const { rows } = await sql<{ n: number }>`select count(distinct xmin::text)::int as n from security_events
      where user_id = ${user.id} and kind = 'key.write'`.execute(reads(em));
    expect(rows[0]!.n).toBe(2);

    // A bad id fails the shared statement: each of its entries is then tried alone.
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => entry(null, 20 + i)),
      entry('not-a-uuid', 30),
      ...Array.from({ length: 10 }, (_, i) => entry(null, 31 + i)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(10).fill('fulfilled'),
      'rejected',
      ...Array(10).fill('fulfilled'),
    ]);
    const written = (await entries(user.id, 'key.write')).map((w) => w.operation);
    expect(written.sort()).toEqual(
      Array.from({ length: 41 }, (_, i) => `op${i}`)
        .filter((op) => op !== 'op30')
        .sort(),
    );
  });
  // An outside transaction holds one account's row, which the entry's foreign key check waits
  // for: on the embedded database the test cannot open a second connection, so this runs on PostgreSQL.
  it.skipIf(!process.env.DATABASE_URL)(
    "an entry held up by a lock on its account's row holds up no other account's",
    async () => {
      const [held, free] = [await userWithKey(t, [...WRITER]), await userWithKey(t, [...WRITER])];
      const em = t.db.orm.em.fork();
      const entry = (userId: string, i: number) =>
        recordSecurityEvent(em, { userId, kind: 'key.write', operation: `op${i}`, resource: `/r/${i}` });
      const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select id from users where id = $1 for update', [held.user.id]);
        let heldDone = false;
        const waiting = Promise.all([entry(held.user.id, 1), entry(held.user.id, 2)]).then(() => {
          heldDone = true;
        });
        // Both of the other account's, one after the other, while the first account's wait (a
        // failure here ends the test, and the holder's transaction, instead of waiting for ever).
        const late = () => new Promise((_, reject) => setTimeout(() => reject(new Error('held up')), 5000).unref());
        await Promise.race([entry(free.user.id, 3), late()]);
        await Promise.race([entry(free.user.id, 4), late()]);
        expect(heldDone).toBe(false);
        expect((await entries(free.user.id, 'key.write')).map((e) => e.operation)).toEqual(['op3', 'op4']);
        await holder.query('commit');
        await waiting;
      } finally {
        await holder.end();
      }
      expect((await entries(held.user.id, 'key.write')).map((e) => e.operation).sort()).toEqual(['op1', 'op2']);
    },
  );
});

describe("a key's use", () => {
  it('keeps its last use, channel, client and addresses, and marks a new address or client', async () => {
    const { user, token } = await userWithKey(t, ['profile.read']);
    const me = (address: string, agent?: string) =>
      api.getCurrentUser({ client: sdkFrom(token, address, agent), throwOnError: true });
    await me('192.0.2.1');
    await me('192.0.2.1');
    await t.keyUse.flush();
    const em = t.db.orm.em.fork();
    const key = await em.findOneOrFail(ApiKey, { user: user.id });
    expect(key.lastUsedAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(key).toMatchObject({ lastChannel: 'rest', lastClient: 'integrator-script/2.0' });
    expect((await entries(user.id)).map((e) => [e.kind, e.address, e.client])).toEqual([
      ['key.created', null, null],
      ['key.first_use', '192.0.2.1', 'integrator-script/2.0'],
    ]);

    await me('192.0.2.1');
    await t.keyUse.flush();
    expect(await entries(user.id)).toHaveLength(2); // the same address and client: nothing new

    await me('198.51.100.77');
    await t.keyUse.flush();
    await me('198.51.100.77', 'curl/8.5.0');
    await t.keyUse.flush();
    const marked = (await entries(user.id)).slice(2).map((e) => [e.kind, e.address, e.client]);
    expect(marked).toEqual([
      ['key.new_address', '198.51.100.77', 'integrator-script/2.0'],
      ['key.new_client', '198.51.100.77', 'curl/8.5.0'],
    ]);
  });

  it('keeps a key that changes its User-Agent on every request from flooding the log', async () => {
    const { user, token } = await userWithKey(t, ['profile.read']);
    const hour = () => Math.floor(Date.now() / 3_600_000);
    const started = hour();
    for (let batch = 0; batch < 4; batch++) {
      for (let i = 0; i < 12; i++)
        await api.getCurrentUser({
          client: sdkFrom(token, '192.0.2.50', `rotating/${batch}.${i}`),
          throwOnError: true,
        });
      await t.keyUse.flush();
    }
    const marked = await entries(user.id, 'key.new_client');
    expect(marked.length).toBeGreaterThan(0);
    // 20 an hour (twice that if the test ran across the turn of an hour).
    const cap = hour() === started ? 20 : 40;
    expect(marked.length + (await entries(user.id, 'key.first_use')).length).toBeLessThanOrEqual(cap);
  });

  it('stores what a client sends without control or format characters, cut to its column', async () => {
    const { user } = await userWithKey(t, ['profile.read']);
    await recordSecurityEvent(t.db.orm.em.fork(), {
      userId: user.id,
      kind: 'key.write',
      client: `agent\u202e\u200bgpj.exe\u0085${'x'.repeat(300)}`,
      channel: 'rest',
    });
    const [written] = await entries(user.id, 'key.write');
    expect(written!.client).toMatch(/^agent {2}gpj\.exe x+$/);
    expect(written!.client).toHaveLength(200);
  });
});

describe('Settings → Security log', () => {
  /** A new account's signed-in browser, on a page that carries its session's CSRF token. */
  async function signedUp() {
    const { b, username } = await signedUpBrowser(t.baseUrl);
    await b.get('/settings/keys');
    return { b, username };
  }

  it("shows the owner's sign-ins and keys, filters them, pages them and downloads them", async () => {
    const { b, username } = await signedUp();
    await b.post('/signout', { _csrf: b.csrf() });
    await b.get('/signin');
    expect((await b.post('/signin', { _csrf: b.csrf(), login: username, password: 'wrong' })).status).toBe(401);
    expect(
      (await b.post('/signin', { _csrf: b.csrf(), login: username, password: 'a long enough password' })).status,
    ).toBe(303);
    await b.get('/settings/keys/new');
    const made = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'laptop',
      scopes: 'projects.read',
      expiry: '30',
    });
    expect(made.status).toBe(303);
    const laptop = await t.db.orm.em.fork().findOneOrFail(ApiKey, { name: 'laptop', user: { username } });
    await b.get(`/settings/keys/${laptop.id}/regenerate`);
    expect((await b.post(`/settings/keys/${laptop.id}/regenerate`, { _csrf: b.csrf(), overlap: '0' })).status).toBe(
      303,
    );

    const shown = await b.get('/settings/security-log');
    expect(shown.status).toBe(200);
    for (const what of ['Key regenerated', 'Key created', 'Signed in', 'Failed sign-in', 'Signed out'])
      expect(shown.text).toContain(`${what}</td>`);
    expect(shown.text).toContain('laptop');

    const failed = await b.get('/settings/security-log?kind=signin.failed');
    expect(failed.text).toContain('Failed sign-in');
    expect(failed.text).not.toContain('Key created</td>');

    const download = await fetch(`${t.baseUrl}/settings/security-log.jsonl`, {
      headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    expect(download.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await download.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.kind)).toEqual(['signout', 'signin.failed', 'signin', 'key.created', 'key.regenerated']);
    expect(lines[3]).toMatchObject({ keyName: 'laptop', channel: 'web' });
    expect(lines[4]).toMatchObject({ keyId: laptop.id, keyName: 'laptop', channel: 'web' });

    // Another person's log is their own.
    const other = await signedUp();
    const theirs = await other.b.get('/settings/security-log');
    expect(theirs.text).not.toContain('laptop');
    expect(theirs.text).not.toContain('Failed sign-in</td>');
  });

  it('pages a long log, newest first, and asks a stranger to sign in', async () => {
    const { b, username } = await signedUp();
    const em = t.db.orm.em.fork();
    const user = await em.findOneOrFail(User, { username });
    for (let i = 0; i < 55; i++)
      await recordSecurityEvent(em, {
        userId: user.id,
        kind: 'key.write',
        keyName: `key ${i}`,
        channel: 'rest',
        operation: 'createPost',
        resource: `/api/v1/posts/${i}`,
      });
    const first = await b.get('/settings/security-log');
    expect(first.text).toContain('key 54</bdi>');
    expect(first.text).not.toContain('key 4</bdi>');
    const older = /href="(\/settings\/security-log\?before=[^"]+)"/.exec(first.text)?.[1];
    expect(older).toBeDefined();
    const second = await b.get(older!.replaceAll('&amp;', '&'));
    expect(second.text).toContain('key 4</bdi>');
    expect(second.text).not.toContain('key 54</bdi>');
    const stranger = await new Browser(t.baseUrl).get('/settings/security-log');
    expect(stranger.status).toBe(303);
  });
});

describe('the keys page', () => {
  it("shows a key's last addresses and client, and offers to revoke a key left unused", async () => {
    const { b, username } = await signedUpBrowser(t.baseUrl);
    const em = t.db.orm.em.fork();
    const user = await em.findOneOrFail(User, { username });
    const used = await createKey(em, { userId: user.id, name: 'busy', scopes: ['profile.read'], expiresInDays: 60 });
    const idle = await createKey(em, {
      userId: user.id,
      name: 'forgotten',
      scopes: ['profile.read'],
      expiresInDays: 60,
    });
    await em.nativeUpdate(ApiKey, { id: idle.key.id }, { createdAt: new Date(Date.now() - 40 * 86_400_000) });
    for (const address of ['192.0.2.10', '192.0.2.11'])
      await api.getCurrentUser({ client: sdkFrom(used.token, address, 'ci-runner/1.0'), throwOnError: true });
    await t.keyUse.flush();

    const page = (await b.get('/settings/keys')).text;
    expect(page).toContain('REST API');
    expect(page).toContain('ci-runner/1.0');
    expect(page).toContain('192.0.2.10');
    expect(page).toContain('192.0.2.11');
    const offer = /<p class="notice" role="note">Not used for 30 days or more[\s\S]*?<\/p>/.exec(page)?.[0];
    expect(offer).toContain(`<bdi>forgotten</bdi> (<a href="/settings/keys/${idle.key.id}/revoke">`);
    expect(offer).not.toContain('busy');
  });
});

describe('housekeeping', () => {
  it('records each expiry once and removes entries older than the kept days', async () => {
    const { user } = await userWithKey(t, ['profile.read']);
    const em = t.db.orm.em.fork();
    const expiredAt = new Date(Date.now() - 3_600_000);
    await em.nativeUpdate(ApiKey, { user: user.id }, { expiresAt: expiredAt });
    await sweepSecurityLog(t.db.orm.em.fork(), 90);
    await sweepSecurityLog(t.db.orm.em.fork(), 90);
    const expired = await entries(user.id, 'key.expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]!.occurredAt.getTime()).toBe(expiredAt.getTime());

    // Recorded 91 days ago: its time-ordered id says so too.
    const longAgo = Date.now() - 91 * 86_400_000;
    await em.nativeUpdate(
      SecurityEvent,
      { user: user.id, kind: 'key.created' },
      { id: UUID.fromFieldsV7(longAgo, 1, 1, 1).toString(), occurredAt: new Date(longAgo) },
    );
    await sweepSecurityLog(t.db.orm.em.fork(), 90);
    expect((await entries(user.id)).map((e) => e.kind)).toEqual(['key.expired']);
  });
});
