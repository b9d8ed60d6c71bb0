/**
 * The rules of a service, tested without a server: one in-memory embedded database (PGlite) per
 * test file, migrated once as the service's own is, and emptied before each test by one TRUNCATE
 * of every table of ours, so each test starts from a fresh, migrated database in a few
 * milliseconds. The same migrations, SQL and services as the server's; no HTTP in between.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Database, openDatabase } from '../../src/db/database.js';
import type { Actor } from '../../src/kernel/actor.js';
import { SCOPE_IDS, type ScopeId } from '../../src/kernel/scopes.js';
import { createUser } from '../../src/users/users.service.js';
import type { User } from '../../src/users/user.entity.js';
import { ProblemError } from '../../src/kernel/problem.js';

/** Tables that are not data: the migrations' own record. */
const KEPT = new Set(['mikro_orm_migrations']);

export type ServiceDatabase = {
  /** A fresh EntityManager on the test's database, as a request gets one. */
  em: () => EntityManager;
  /** A new user, and how they call as a key with these scopes (every scope unless named). */
  user: (scopes?: readonly ScopeId[]) => Promise<{ user: User; actor: Actor }>;
};

/** Registers the file's hooks: the database before its tests, emptied before each, closed after. */
export function useServiceDatabase(): ServiceDatabase {
  let db: Database | undefined;
  let truncate = '';
  beforeAll(async () => {
    db = await openDatabase({ dataDir: '', inMemory: true, command: 'service tests' });
    const { rows } = await sql<{ name: string }>`
      select quote_ident(tablename) as name from pg_tables where schemaname = 'public'
    `.execute(db.orm.em.fork().getKysely());
    const tables = rows.map((r) => r.name).filter((name) => !KEPT.has(name));
    truncate = `truncate table ${tables.join(', ')} restart identity cascade`;
  }, 120_000);
  beforeEach(async () => {
    await db!.orm.em.fork().getConnection().execute(truncate);
  });
  afterAll(async () => {
    await db?.close();
  });
  const em = () => db!.orm.em.fork();
  return {
    em,
    user: async (scopes = SCOPE_IDS) => {
      const username = `u${randomUUID().slice(0, 8)}`;
      const user = await createUser(em(), { username, email: `${username}@example.test` });
      return { user, actor: { userId: user.id, via: 'key', keyId: randomUUID(), scopes: [...scopes] } };
    },
  };
}

/** How a call ends: the refusal's status and code, or 'allowed'. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string } | 'allowed'> {
  try {
    await call;
    return 'allowed';
  } catch (err) {
    if (err instanceof ProblemError) return { status: err.status, code: err.code };
    throw err;
  }
}
