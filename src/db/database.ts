/**
 * The embedded/real database switch. One code path for both: the normal PostgreSQL driver,
 * the same migrations, the same SQL.
 *
 * Embedded (no DATABASE_URL): PGlite (PostgreSQL compiled to WASM) runs in-process and is
 * served on a loopback socket by pglite-socket with exactly one connection; the ORM's pool is
 * one connection with an acquire timeout. More connections interleave extended-protocol
 * messages and corrupt parameterised queries (electric-sql/pglite#1046).
 */
import { mkdirSync } from 'node:fs';
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';
import { lockDirectory, type DirLock } from './lock.js';
import { usePreparedStatements } from './reads.js';
import { namesRefusedOnThePath, namingClient } from './named-statements.js';
import { reclaimDeadConnections } from './reclaim.js';
import type pg from 'pg';
import { embeddedFeed, postgresFeed, type ChangeFeed } from './changes.js';
import { probeStatementPath, type StatementPath } from './poolers.js';
import { withMigrationLock } from './migration-lock.js';

export type Database = {
  orm: MikroORM;
  kind: 'postgres' | 'embedded';
  /** Where the data lives, for the log line (never includes a password). */
  location: string;
  /** Whether hot statements go named, and why (the operator's setting, or what the path showed). */
  statements: StatementPath;
  /** Migrations applied by this open (empty when the schema was current). */
  applied: string[];
  /** LISTEN/NOTIFY notices (src/db/changes.ts), on either database. */
  changes: ChangeFeed;
  close: () => Promise<void>;
};

export type DatabaseOptions = {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** An in-memory embedded database (tests): no directory, no lock. */
  inMemory?: boolean;
  /** Apply pending migrations on open (default true). */
  migrate?: boolean;
  /** Not applying them (migrate: false), refuse to open while some are pending (MIGRATE_ON_START=false). */
  refusePending?: boolean;
  /** Told before each pending migration runs: its place among them (from 1) and its name. */
  onMigrating?: (n: number, of: number, name: string) => void;
  /** Who opens it, written into the directory lock. */
  command?: string;
  poolMax?: number;
  /**
   * The embedded database's buffer cache (PostgreSQL's shared_buffers; its 128MB default when
   * absent). A CLI command reads a few rows and ends: a small cache is set up in much less time.
   */
  embeddedSharedBuffers?: string;
  /**
   * Hot statements as named prepared statements (DATABASE_PREPARED_STATEMENTS): true, false, or
   * undefined to find out at open whether the path to PostgreSQL keeps them (./poolers.ts).
   */
  preparedStatements?: boolean;
  /** A direct connection past any transaction pooler (DATABASE_DIRECT_URL; default databaseUrl): LISTEN, the migrations' lock. */
  directUrl?: string;
  /** A read replica (DATABASE_READ_URL): reads that may lag a moment go there (src/http/replica-reads.ts). */
  readUrl?: string;
};

/** PGlite 0.5 is PostgreSQL 18; the directory is tagged so a future major never opens it. */
export const EMBEDDED_SUBDIR = 'pglite-pg18';

function ormOptions() {
  return {
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, snapshot: false, transactional: true, allOrNothing: true, silent: true },
    discovery: { warnWhenNoEntities: false },
    forceUtcTimezone: true,
    // shipyard_words() is written by a migration, not declared as an ORM routine: leave it alone.
    schemaGenerator: { ignoreRoutines: true },
    allowGlobalContext: false,
    debug: false,
  };
}

/** The ORM on either database, its hot reads set up, its migrations applied unless told not to. */
async function initOrm(
  opts: DatabaseOptions,
  clientUrl: string,
  pool: { min: number; max: number },
  embedded: boolean,
  named: boolean,
): Promise<{ orm: MikroORM; applied: string[] }> {
  const orm = await MikroORM.init({
    ...ormOptions(),
    clientUrl,
    pool,
    ...(opts.readUrl ? { replicas: [{ name: 'replica', clientUrl: opts.readUrl }], preferReadReplicas: false } : {}),
    // Hot statements go named on each connection, in transactions too (src/db/named-statements.ts).
    driverOptions: {
      connectionTimeoutMillis: 10_000,
      ...(named ? { Client: namingClient() } : {}),
    },
  });
  usePreparedStatements(orm, named);
  const nativePool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
  // The embedded database is one session whatever the client does: a connection made anew (after
  // one was dropped) finds the prepared statements of the one before, which `pg` would try to
  // prepare again ("already exists") and fail on every later use. Cleared as the pool makes it,
  // before any query of the ORM's, a hot read's or the webhook queue's (the first connection,
  // made before this, opened the session).
  if (embedded) nativePool.on('connect', (client) => void client.query('deallocate all').catch(() => undefined));
  reclaimDeadConnections(nativePool);
  // On PostgreSQL, under a lock that instances started together wait for (./migration-lock.ts);
  // the embedded database has one opener, its directory lock.
  const lockUrl = embedded ? undefined : (opts.directUrl ?? clientUrl);
  const applied =
    (opts.migrate ?? true)
      ? await migrate(orm, lockUrl, opts.onMigrating)
      : opts.refusePending
        ? await (lockUrl ? withMigrationLock(lockUrl, () => refusePending(orm)) : refusePending(orm))
        : [];
  return { orm, applied };
}

/** Applies the pending migrations (all or none: one transaction), telling `onMigrating` of each. */
async function migrate(
  orm: MikroORM,
  lockUrl: string | undefined,
  onMigrating: DatabaseOptions['onMigrating'],
): Promise<string[]> {
  const up = async () => {
    if (onMigrating) {
      const of = (await orm.migrator.getPending()).length;
      let n = 0;
      orm.migrator.on('migrating', (m) => onMigrating(++n, of, m.name));
    }
    return (await orm.migrator.up()).map((m) => m.name);
  };
  return lockUrl ? withMigrationLock(lockUrl, up) : up();
}

/** With migrations left to a deploy step (MIGRATE_ON_START=false): a schema behind the code is an error, not a surprise later. */
async function refusePending(orm: MikroORM): Promise<string[]> {
  const pending = await orm.migrator.getPending();
  if (pending.length)
    throw new Error(
      `${pending.length} database migration(s) are pending (${pending[0]!.name}…) and MIGRATE_ON_START is false: run \`bin/shipyard migrate\` first`,
    );
  return [];
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts, opts.databaseUrl) : openEmbedded(opts);
}

/**
 * The primary's path and the replica's, when there is one: the pools' connections name statements
 * on both or on neither, so a replica behind a pooler that drops names turns naming off too.
 */
async function probePaths(databaseUrl: string, readUrl: string | undefined): Promise<StatementPath> {
  const [primary, replica] = await Promise.all([
    probeStatementPath(databaseUrl),
    readUrl ? probeStatementPath(readUrl) : undefined,
  ]);
  if (replica && !replica.named) return { ...replica, reason: `DATABASE_READ_URL: ${replica.reason}` };
  return primary.named ? primary : { ...primary, reason: `DATABASE_URL: ${primary.reason}` };
}

/**
 * How hot statements go: as the probe finds (auto), unnamed (false), or named (true), the probe
 * then still run, so that a path that drops names is said at start and by /readyz, not first by
 * failed requests.
 */
async function statementsOn(opts: DatabaseOptions, databaseUrl: string): Promise<StatementPath> {
  if (opts.preparedStatements === false) return { named: false, reason: 'DATABASE_PREPARED_STATEMENTS=false' };
  if (opts.preparedStatements === undefined) return probePaths(databaseUrl, opts.readUrl);
  // Chosen: the probe only informs, and a probe that fails does not stop the start.
  const probed = await probePaths(databaseUrl, opts.readUrl).catch(
    (error: Error): StatementPath => ({ named: true, reason: `the path could not be probed (${error.message})` }),
  );
  return {
    named: true,
    reason: probed.named
      ? 'DATABASE_PREPARED_STATEMENTS=true'
      : `DATABASE_PREPARED_STATEMENTS=true, against ${probed.reason}`,
    ...(probed.transactionPooler ? { transactionPooler: true } : {}),
    // Only a name seen dropped: a probe that could not tell in time proves nothing.
    ...(probed.dropsNames ? { refused: probed.reason } : {}),
  };
}

async function openPostgres(opts: DatabaseOptions, databaseUrl: string): Promise<Database> {
  const statements = await statementsOn(opts, databaseUrl);
  const { orm, applied } = await initOrm(
    opts,
    databaseUrl,
    { min: 0, max: opts.poolMax ?? 10 },
    false,
    statements.named,
  );
  if (statements.refused) namesRefusedOnThePath((orm.config.get('driverOptions') as { Client?: unknown }).Client);
  const url = new URL(databaseUrl);
  return {
    orm,
    kind: 'postgres',
    location: `${url.hostname}:${url.port || 5432}${url.pathname}`,
    statements,
    applied,
    // LISTEN needs a session of its own: past any transaction pooler.
    changes: postgresFeed(opts.directUrl ?? databaseUrl),
    close: () => orm.close(true),
  };
}

/** PGlite in this process, its directory locked against a second opener, served to the ORM on a loopback socket. */
async function openEmbedded(opts: DatabaseOptions): Promise<Database> {
  let lock: DirLock | undefined;
  let dataPath = 'memory://';
  if (!opts.inMemory) {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    lock = lockDirectory(opts.dataDir, opts.command ?? 'shipyard');
    dataPath = `${opts.dataDir}/${EMBEDDED_SUBDIR}`;
  }
  let db: PGlite | undefined;
  let socket: PGLiteSocketServer | undefined;
  try {
    const startParams = opts.embeddedSharedBuffers
      ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.embeddedSharedBuffers}`]
      : undefined;
    db = await PGlite.create(opts.inMemory ? undefined : dataPath, startParams ? { startParams } : {});
    socket = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await socket.start();
    const named = opts.preparedStatements ?? true;
    const { orm, applied } = await initOrm(
      opts,
      `postgresql://postgres@${socket.getServerConn()}/postgres`,
      { min: 1, max: 1 },
      true,
      named,
    );
    const [s, d] = [socket, db];
    return {
      orm,
      kind: 'embedded',
      location: dataPath,
      statements: {
        named,
        reason: named ? 'the embedded database: one session' : 'DATABASE_PREPARED_STATEMENTS=false',
      },
      applied,
      changes: embeddedFeed(orm),
      close: async () => {
        await orm.close(true);
        await s.stop();
        await d.close();
        lock?.release();
      },
    };
  } catch (err) {
    await socket?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
}
