/**
 * Two instances of the service on one database and one Redis: they spend from one rate-limit
 * budget, and an MCP client whose consecutive requests land on different instances works
 * (the MCP server is stateless). Skipped where no Redis answers (REDIS_URL or 127.0.0.1:6379).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Beside, instanceBeside, startServer, userWithKey, uniqueName, type TestServer } from './harness.js';
import { redisOrNothing } from './redis.js';
import { redisLinkOf } from '../src/budgets/counters.js';
import * as api from '../codegen/generated/api/sdk.gen.js';

const redis = await redisOrNothing();

let t: TestServer;
const instances: Beside[] = [];
const urls: string[] = [];

describe.skipIf(!redis)('two instances, one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    t = await startServer();
    for (let i = 0; i < 2; i++) {
      const instance = await instanceBeside(t, {
        redis: redis && redisLinkOf(redis),
        config: {
          rateLimitPerMinute: 6,
          // OAuth sign-in on, with a registration budget small enough to spend here.
          publicUrl: 'http://localhost:3999',
          oauthRegistrationsPerHour: 3,
          // The test names its own client address (X-Forwarded-For): Redis keeps the hour's count between runs.
          trustProxy: ['loopback'],
        },
      });
      instances.push(instance);
      urls.push(`${instance.url}/api/v1`);
    }
  });
  afterAll(async () => {
    for (const i of instances) await i.close();
    await redis?.quit();
    await t?.close();
  });

  it("share the OAuth endpoints' budgets too: registrations from one address, across both", async () => {
    const statuses: number[] = [];
    const address = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(1).toString('hex')}00::1`;
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${urls[i % 2]!.replace('/api/v1', '')}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ client_name: `App ${i}`, redirect_uris: ['http://127.0.0.1:53682/callback'] }),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
  });

  it('share one rate-limit budget per key', async () => {
    const { token } = await userWithKey(t, ['profile.read']);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${urls[i % 2]}/users/me`, { headers: { authorization: `Bearer ${token}` } });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  it('serve one MCP client across both instances', async () => {
    const owner = await userWithKey(t, ['projects.read', 'projects.write']);
    const project = (await api.createProject({ client: owner.client, body: { name: uniqueName('Two') } })).data!;
    let n = 0;
    const seen = new Set<string>();
    const alternate: typeof fetch = async (_input, init) => {
      const target = urls[n++ % 2]!;
      seen.add(target);
      return fetch(`${target}/mcp`, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${urls[0]}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${owner.token}` } },
      fetch: alternate,
    });
    const client = new Client({ name: 'roaming', version: '1.0.0' });
    await client.connect(transport);
    const created = (await client.callTool({
      name: 'create_milestone',
      arguments: { projectId: project.id, title: 'Across' },
    })) as unknown as { structuredContent: { id: string } };
    const roadmap = (await client.callTool({
      name: 'get_roadmap',
      arguments: { projectId: project.id },
    })) as unknown as { structuredContent: { items: { id: string }[] } };
    expect(roadmap.structuredContent.items.map((m) => m.id)).toEqual([created.structuredContent.id]);
    expect(seen.size).toBe(2);
    await client.close();
  });
});
