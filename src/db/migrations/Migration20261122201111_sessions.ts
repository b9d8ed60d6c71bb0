import { Migration } from '@mikro-orm/migrations';

export class Migration20261122201111_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "sessions" ("id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash")`);
    this.addSql(`create index "sessions_user_idx" on "sessions" ("user_id")`);
    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sessions"`);
  }
}
