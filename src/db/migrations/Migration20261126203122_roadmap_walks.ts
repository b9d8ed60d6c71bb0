import { Migration } from '@mikro-orm/migrations';

/** Page walks through a roadmap that hold under concurrent moves (src/milestones/roadmap-walks.ts). */
export class Migration20261126203122_roadmap_walks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "roadmap_walks" ("id" uuid not null, "project_id" uuid not null, "list" varchar(16) not null, "pages" jsonb not null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "roadmap_walks_created_at_idx" on "roadmap_walks" ("created_at")`);
    this.addSql(`alter table "roadmap_walks" add constraint "roadmap_walks_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "roadmap_walks"`);
  }
}
