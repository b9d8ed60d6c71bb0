import { Migration } from '@mikro-orm/migrations';

/** The tables a create makes a row in whose id its answer names (the idempotency record's resource_id). */
const CREATED = ['projects', 'milestones', 'posts', 'comments', 'jobs', 'media'];

/**
 * Idempotency records belong to the account, not the key (src/idempotency/idempotency.service.ts):
 * one namespace for all of an account's keys, over REST and MCP alike. Each names the resource its
 * create made; deleting that resource, however it goes (a delete, a cascade, plain SQL), marks the
 * record, so that a retry is told the resource is gone instead of being replayed it.
 */
export class Migration20261126180000_idempotency_account extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "idempotency_records" add column "user_id" uuid null');
    this.addSql(
      'update "idempotency_records" r set "user_id" = k."user_id" from "api_keys" k where k."id" = r."api_key_id"',
    );
    this.addSql('delete from "idempotency_records" where "user_id" is null');
    this.addSql('alter table "idempotency_records" alter column "user_id" set not null');
    // Two keys of one account may each have used the same Idempotency-Key: the newest record stays.
    this.addSql(
      `delete from "idempotency_records" r using "idempotency_records" newer
       where newer."user_id" = r."user_id" and newer."key" = r."key"
         and (newer."created_at", newer."id") > (r."created_at", r."id")`,
    );
    this.addSql('alter table "idempotency_records" drop constraint "idempotency_records_key_unique"');
    this.addSql(
      'alter table "idempotency_records" add constraint "idempotency_records_key_unique" unique ("user_id", "key")',
    );
    this.addSql('alter table "idempotency_records" add column "resource_id" uuid null');
    this.addSql('alter table "idempotency_records" add column "resource_gone_at" timestamptz null');
    this.addSql(
      `update "idempotency_records" set "resource_id" = ("response_body"->>'id')::uuid
       where "status" between 200 and 299 and "response_body"->>'id' ~ '^[0-9a-f-]{36}$'`,
    );
    this.addSql(
      'create index "idempotency_records_resource_idx" on "idempotency_records" ("resource_id") where "resource_id" is not null',
    );
    this.addSql(`
      create function shipyard_idempotency_gone() returns trigger language plpgsql as $$
      begin
        update idempotency_records set resource_gone_at = now()
        where resource_id = old.id and resource_gone_at is null;
        return null;
      end $$`);
    for (const table of CREATED) {
      this.addSql(
        `create trigger "${table}_idempotency_gone" after delete on "${table}" for each row execute function shipyard_idempotency_gone()`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of CREATED) this.addSql(`drop trigger "${table}_idempotency_gone" on "${table}"`);
    this.addSql('drop function shipyard_idempotency_gone()');
    this.addSql('drop index "idempotency_records_resource_idx"');
    this.addSql('alter table "idempotency_records" drop column "resource_gone_at"');
    this.addSql('alter table "idempotency_records" drop column "resource_id"');
    this.addSql('alter table "idempotency_records" drop constraint "idempotency_records_key_unique"');
    this.addSql(
      'alter table "idempotency_records" add constraint "idempotency_records_key_unique" unique ("api_key_id", "key")',
    );
    this.addSql('alter table "idempotency_records" drop column "user_id"');
  }
}
