import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '', inMemory: true });
});
afterAll(async () => {
  await db?.close();
});

describe('migrations', () => {
  it('build exactly the schema the entities describe (no pending diff)', async () => {
    expect(await db.orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe('');
    expect(await db.orm.migrator.getPending()).toEqual([]);
  });
});
