import { Migration } from '@mikro-orm/migrations';

/** Threaded comments on posts. */
export class Migration20261122162636_comments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "comments" ("id" uuid not null, "post_id" uuid not null, "author_id" uuid not null, "parent_id" uuid null, "depth" int not null default 0, "body" text null, "reply_count" int not null default 0, "deleted_at" timestamptz null, "hidden_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "comments_post_idx" on "comments" ("post_id", "id")`);
    this.addSql(`create index "comments_parent_idx" on "comments" ("parent_id")`);
    this.addSql(`create index "comments_author_idx" on "comments" ("author_id")`);
    this.addSql(`alter table "comments" add constraint "comments_post_id_foreign" foreign key ("post_id") references "posts" ("id") on delete cascade`);
    this.addSql(`alter table "comments" add constraint "comments_author_id_foreign" foreign key ("author_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "comments" add constraint "comments_parent_id_foreign" foreign key ("parent_id") references "comments" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "comments" cascade`);
  }
}
