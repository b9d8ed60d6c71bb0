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

  it('keeps no pending list on the full-text indexes (a search would scan it linearly)', async () => {
    const rows = await db.orm.em
      .fork()
      .execute<{ name: string; options: string[] | null }[]>(
        `select c.relname as name, c.reloptions as options from pg_class c where c.relname like '%\\_search\\_idx' order by 1`,
      );
    expect(rows.map((r) => r.name)).toEqual([
      'jobs_search_idx',
      'posts_search_idx',
      'projects_search_idx',
      'users_search_idx',
    ]);
    for (const r of rows) expect(r.options).toContain('fastupdate=off');
  });
});
