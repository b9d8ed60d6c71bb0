/**
 * A streaming replica (made with `pg_basebackup -R`, as an operator makes one) behind
 * DATABASE_READ_URL: the reads that may lag are served from it, and a key's own write is read
 * back at once from the primary. Replay on the replica is paused to tell the two apart. Skipped
 * where PostgreSQL's server binaries are missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { startServer, type TestServer, uniqueName, userWithKey } from './harness.js';
import { type Cluster, clusterAvailable, startCluster } from './pg-cluster.js';
import { STICKY_MS } from '../src/http/replica-reads.js';

let primary: Cluster;
let replica: Cluster;
let t: TestServer;

async function onReplica(sql: string) {
  const c = new pg.Client({ connectionString: replica.url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

/** Until the replica has replayed everything the primary has written so far. */
async function caughtUp() {
  const p = new pg.Client({ connectionString: primary.url });
  await p.connect();
  const [{ lsn }] = (await p.query('select pg_current_wal_lsn()::text as lsn')).rows;
  await p.end();
  for (let i = 0; i < 100; i++) {
    const [{ behind }] = await onReplica(`select pg_last_wal_replay_lsn() < '${lsn}'::pg_lsn as behind`);
    if (!behind) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the replica did not catch up');
}

describe.skipIf(!clusterAvailable)('a read replica', () => {
  beforeAll(async () => {
    primary = await startCluster();
    replica = await startCluster({ replicaOf: primary });
    t = await startServer({ databaseUrl: primary.url, readUrl: replica.url });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    replica?.destroy();
    primary?.destroy();
  });

  it("serves others' content from the replica, and a key's own write from the primary at once", async () => {
    const writer = await userWithKey(t);
    const reader = await userWithKey(t);
    await caughtUp();
    await onReplica('select pg_wal_replay_pause()');
    try {
      const name = uniqueName('Replicated');
      const made = await api.createProject({ client: writer.client, body: { name } });
      expect(made.response?.status).toBe(201);
      const listed = async (who: typeof writer) =>
        (await api.listUserProjects({ client: who.client, path: { username: writer.user.username } })).data!.items.map(
          (p) => p.name,
        );
      // The writer reads it back at once: its reads stay on the primary after its write.
      expect(await listed(writer)).toContain(name);
      // Another reader reads the replica, which has not replayed the write yet.
      expect(await listed(reader)).not.toContain(name);
      // The key's own write sticks to the primary for a few seconds only.
      await new Promise((r) => setTimeout(r, STICKY_MS + 200));
      expect(await listed(writer)).not.toContain(name);
    } finally {
      await onReplica('select pg_wal_replay_resume()');
    }
    await caughtUp();
    const after = await api.listUserProjects({ client: reader.client, path: { username: writer.user.username } });
    expect(after.data!.items).toHaveLength(1);
  }, 60_000);
});
