import { Migration } from '@mikro-orm/migrations';

/** Reactions on posts, with an exact per-post total. */
export class Migration20261122172001_reactions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "reactions" ("id" uuid not null, "post_id" uuid not null, "user_id" uuid not null, "kind" text not null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "reactions_user_idx" on "reactions" ("user_id")`);
    this.addSql(`alter table "reactions" add constraint "reactions_post_user_kind_unique" unique ("post_id", "user_id", "kind")`);
    this.addSql(`alter table "posts" add "reaction_count" int not null default 0`);
    this.addSql(`alter table "reactions" add constraint "reactions_post_id_foreign" foreign key ("post_id") references "posts" ("id") on delete cascade`);
    this.addSql(`alter table "reactions" add constraint "reactions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "reactions" add constraint "reactions_kind_check" check ("kind" in ('like', 'heart', 'celebrate', 'rocket', 'eyes', 'laugh'))`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "reactions" cascade`);
    this.addSql(`alter table "posts" drop column "reaction_count"`);
  }
}
