import { Migration } from '@mikro-orm/migrations';

/** Stored first responses for Idempotency-Key (24 hours). */
export class Migration20261122172005_idempotency extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "idempotency_records" ("id" uuid not null, "api_key_id" uuid not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "state" text not null default 'in_progress', "status" int null, "response_body" jsonb null, "location" varchar(500) null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "idempotency_records_created_idx" on "idempotency_records" ("created_at")`);
    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_key_unique" unique ("api_key_id", "key")`);
    this.addSql(`alter table "idempotency_records" add constraint "idempotency_records_state_check" check ("state" in ('in_progress', 'done'))`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_records" cascade`);
  }
}
