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

  // The ORM's schema diff only sees whether a trigger given as SQL is there, not what it says.
  it('has each trigger as its entity writes it (when it fires, on what, per row or statement)', async () => {
    const declared = db.orm.getMetadata().getAll();
    const triggers = [...declared.values()].flatMap((meta) =>
      (meta.triggers ?? []).filter((tr) => tr.expression).map((tr) => ({ name: tr.name, expression: tr.expression! })),
    );
    expect(triggers.length).toBeGreaterThan(5);
    // Case, quotes, parentheses, the schema's name and spacing aside: PostgreSQL writes them its way.
    const plain = (sql: string) =>
      sql
        .toLowerCase()
        .replace(/["()]|public\./g, '')
        .replace(/\s+/g, ' ')
        .trim();
    for (const { name, expression } of triggers) {
      const [row] = await db.orm.em
        .fork()
        .execute<{ def: string }[]>('select pg_get_triggerdef(oid) as def from pg_trigger where tgname = ?', [name]);
      expect(plain(row?.def ?? `no trigger ${name}`), name).toBe(plain(expression));
    }
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
