import { Migration } from '@mikro-orm/migrations';

/**
 * Full-text search: a weighted tsvector column kept current by PostgreSQL (generated, stored)
 * on posts, projects and users, each with a GIN index. array_to_string is not immutable, so a
 * small immutable wrapper turns tag arrays into text for the generated expressions.
 */
export class Migration20261122170000_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function shipyard_words(text[]) returns text language sql immutable parallel safe as $$ select coalesce(array_to_string($1, ' '), '') $$`);
    this.addSql(`alter table "posts" add column "search" tsvector generated always as (
      setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
      setweight(to_tsvector('english', shipyard_words(tags)), 'B') ||
      setweight(to_tsvector('english', coalesce(body, '')), 'C')) stored`);
    this.addSql(`alter table "projects" add column "search" tsvector generated always as (
      setweight(to_tsvector('english', coalesce(name, '')), 'A') ||
      setweight(to_tsvector('english', coalesce(tagline, '') || ' ' || shipyard_words(tags)), 'B') ||
      setweight(to_tsvector('english', coalesce(description, '')), 'C')) stored`);
    this.addSql(`alter table "users" add column "search" tsvector generated always as (
      setweight(to_tsvector('simple', coalesce(username, '') || ' ' || coalesce(display_name, '')), 'A') ||
      setweight(to_tsvector('english', shipyard_words(skills)), 'B') ||
      setweight(to_tsvector('english', coalesce(bio, '')), 'C')) stored`);
    this.addSql(`create index "posts_search_idx" on "posts" using gin ("search")`);
    this.addSql(`create index "projects_search_idx" on "projects" using gin ("search")`);
    this.addSql(`create index "users_search_idx" on "users" using gin ("search")`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "posts" drop column "search"`);
    this.addSql(`alter table "projects" drop column "search"`);
    this.addSql(`alter table "users" drop column "search"`);
    this.addSql(`drop function if exists shipyard_words(text[])`);
  }
}
