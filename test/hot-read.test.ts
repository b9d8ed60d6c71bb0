/**
 * Hot reads as named prepared statements (src/db/hot-read.ts): prepared on the ORM's pool by
 * default, through `em.execute` inside a transaction and when DATABASE_PREPARED_STATEMENTS is
 * false. Each database here has one connection, so the statements it prepared are the ones
 * `pg_prepared_statements` lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { preparedRows } from '../src/db/hot-read.js';
import { loadConfig } from '../src/config.js';

const open = (preparedStatements?: boolean) =>
  openDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: '',
    inMemory: true,
    migrate: false,
    poolMax: 1,
    preparedStatements,
  });

let prepared: Database;
let unprepared: Database;
beforeAll(async () => {
  [prepared, unprepared] = [await open(), await open(false)];
});
afterAll(async () => {
  await prepared?.close();
  await unprepared?.close();
});

// A text no other test runs, so the statement it prepares is this test's own.
const SQL = `select ?::int + 1 as n, 'hot-read.test' as source`;
const preparedHere = async (db: Database) => {
  const [row] = await db.orm.em
    .fork()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from pg_prepared_statements where name like 'hot\\_%' and statement like '%hot-read.test%'`,
    );
  return row!.n;
};

describe('hot reads', () => {
  it('run as one named prepared statement per text, reused on the next call', async () => {
    const em = prepared.orm.em.fork();
    expect(await preparedRows<{ n: number }>(em, SQL, [41])).toEqual([{ n: 42, source: 'hot-read.test' }]);
    expect(await preparedRows<{ n: number }>(em, SQL, [1])).toEqual([{ n: 2, source: 'hot-read.test' }]);
    expect(await preparedHere(prepared)).toBe(1);
  });

  it("inside a transaction, run on the transaction's connection and see its writes", async () => {
    const n = await prepared.orm.em.fork().transactional(async (tem) => {
      await tem.execute(`create temporary table hot_read_probe (n int) on commit drop`);
      await tem.execute(`insert into hot_read_probe values (7)`);
      // With one connection, a read outside the transaction would wait for it until the acquire timeout.
      return preparedRows<{ n: number }>(tem, `select n from hot_read_probe where n = ?`, [7]);
    });
    expect(n).toEqual([{ n: 7 }]);
  });

  it('are not prepared when DATABASE_PREPARED_STATEMENTS is false', async () => {
    const em = unprepared.orm.em.fork();
    expect(await preparedRows<{ n: number }>(em, SQL, [41])).toEqual([{ n: 42, source: 'hot-read.test' }]);
    expect(await preparedHere(unprepared)).toBe(0);
  });

  it('DATABASE_PREPARED_STATEMENTS is true by default and must be true or false', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements).toBe(true);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(
      /DATABASE_PREPARED_STATEMENTS must be true or false, got 'off'/,
    );
  });
});
