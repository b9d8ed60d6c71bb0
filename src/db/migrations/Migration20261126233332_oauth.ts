import { Migration } from '@mikro-orm/migrations';

/** OAuth sign-in for MCP clients (src/oauth/): registered clients, grants, and the client a key was handed to. */

export class Migration20261126233332_oauth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "oauth_clients" ("id" uuid not null, "name" varchar(100) not null, "redirect_uris" jsonb not null, "client_uri" varchar(2000) null, "created_at" timestamptz not null, "last_used_at" timestamptz null, primary key ("id"))`);
    this.addSql(`create index "oauth_clients_created_at_idx" on "oauth_clients" ("created_at")`);
    this.addSql(`create table "oauth_grants" ("id" uuid not null, "client_id" varchar(2000) not null, "client_name" varchar(100) not null, "redirect_uri" varchar(2000) not null, "code_challenge" varchar(128) not null, "resource" varchar(2000) not null, "state" varchar(1000) null, "requested_scopes" text[] not null, "expires_at" timestamptz not null, "user_id" uuid null, "granted_scopes" text[] null, "key_expires_at" timestamptz null, "code_hash" varchar(64) null, "code_expires_at" timestamptz null, "used_at" timestamptz null, "key_id" uuid null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "oauth_grants" add constraint "oauth_grants_code_hash_unique" unique ("code_hash")`);
    this.addSql(`create index "oauth_grants_created_at_idx" on "oauth_grants" ("created_at")`);
    this.addSql(`alter table "api_keys" add "oauth_client_id" varchar(2000) null`);
    this.addSql(`alter table "oauth_grants" add constraint "oauth_grants_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "oauth_grants"`);
    this.addSql(`drop table "oauth_clients"`);
    this.addSql(`alter table "api_keys" drop column "oauth_client_id"`);
  }
}
