import { Migration } from '@mikro-orm/migrations';

/** The security log (Settings → Security log), and where and by what each key was used. */
export class Migration20261127120058_security_log extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "security_events" ("id" uuid not null, "user_id" uuid not null, "kind" varchar(40) not null, "occurred_at" timestamptz not null, "key_id" uuid null, "key_name" varchar(100) null, "channel" varchar(10) null, "client" varchar(200) null, "address" varchar(64) null, "operation" varchar(60) null, "resource" varchar(300) null, primary key ("id"))`);
    this.addSql(`create index "security_events_user_idx" on "security_events" ("user_id", "id")`);
    this.addSql(`create index "security_events_key_idx" on "security_events" ("key_id", "kind")`);
    this.addSql(`create table "api_key_sightings" ("key_id" uuid not null, "kind" varchar(10) not null, "value" varchar(200) not null, "first_seen_at" timestamptz not null, "last_seen_at" timestamptz not null, primary key ("key_id", "kind", "value"))`);
    this.addSql(`alter table "api_keys" add "last_channel" varchar(10) null, add "last_client" varchar(200) null`);
    this.addSql(`alter table "security_events" add constraint "security_events_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "api_key_sightings" add constraint "api_key_sightings_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_key_sightings"`);
    this.addSql(`drop table if exists "security_events"`);
    this.addSql(`alter table "api_keys" drop column "last_channel", drop column "last_client"`);
  }
}
