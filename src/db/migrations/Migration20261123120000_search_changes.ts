import { Migration } from '@mikro-orm/migrations';

/**
 * A change counter for the search cache (src/search/search-cache.ts): every statement that can
 * change a search result — a searchable text, a visibility rule's input, a membership — takes
 * the next value of `search_changes` before its transaction commits. Sequences are not
 * transactional, so the counter never blocks a writer and every process (another instance,
 * the operator CLI, plain SQL) moves it. Statement-level, and only for the columns a result
 * depends on: a comment count or a project's updated_at does not empty the cache. An update of
 * `search` fires for any column the generated vector is computed from.
 *
 * The writer also holds a shared advisory lock (21320, 1) until its transaction has ended (locks
 * are released after the commit is visible). Writers never wait for each other on it; a search
 * that wants to store its page takes it exclusively for an instant, with a try that never
 * waits, to learn that no counted change is still uncommitted.
 *
 * The partial index answers "has this person hidden posts?" (one of the questions that decide
 * whether a caller sees the shared public results) without reading all of their posts.
 */
const WATCHED: Array<[table: string, columns: string]> = [
  ['posts', 'search, hidden_at, project_id, author_id'],
  ['projects', 'search, visibility, owner_id'],
  ['project_members', 'project_id, user_id'],
  ['jobs', 'search, status, expires_at'],
  ['users', 'search'],
];

export class Migration20261123120000_search_changes extends Migration {
  override async up(): Promise<void> {
    this.addSql('create sequence "search_changes"');
    this.addSql(`create function "shipyard_search_changed"() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock_shared(21320, 1);
        perform nextval('search_changes');
        return null;
      end $$`);
    for (const [table, columns] of WATCHED) {
      this.addSql(`create trigger "${table}_search_changed" after insert or delete or update of ${columns} on "${table}"
        for each statement execute function "shipyard_search_changed"()`);
      this.addSql(`create trigger "${table}_search_truncated" after truncate on "${table}"
        for each statement execute function "shipyard_search_changed"()`);
    }
    this.addSql('create index "posts_author_hidden_idx" on "posts" ("author_id") where hidden_at is not null');
  }

  override async down(): Promise<void> {
    this.addSql('drop index "posts_author_hidden_idx"');
    for (const [table] of WATCHED) {
      this.addSql(`drop trigger "${table}_search_changed" on "${table}"`);
      this.addSql(`drop trigger "${table}_search_truncated" on "${table}"`);
    }
    this.addSql('drop function "shipyard_search_changed"()');
    this.addSql('drop sequence "search_changes"');
  }
}
