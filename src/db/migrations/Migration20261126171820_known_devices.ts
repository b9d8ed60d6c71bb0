import { Migration } from '@mikro-orm/migrations';

/** Browsers an account has signed in from: their sign-ins spend their own budget (src/sessions/sessions.service.ts). */
export class Migration20261126171820_known_devices extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "known_devices" ("id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "known_devices" add constraint "known_devices_token_hash_unique" unique ("token_hash")`);
    this.addSql(`create index "known_devices_user_idx" on "known_devices" ("user_id")`);
    this.addSql(`alter table "known_devices" add constraint "known_devices_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table "known_devices"');
  }
}
