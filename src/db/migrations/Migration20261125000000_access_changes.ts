import { Migration } from '@mikro-orm/migrations';

/**
 * Revocation reaches every instance at once: a trigger on the keys and one on the accounts send
 * a notification (src/keys/access-changes.ts) whenever a key is revoked, deleted or changed, or
 * an account is disabled, enabled or deleted (its keys go with it, each with its own
 * notification); a TRUNCATE of either table says to forget every key. `users.disabled_at` is new: a disabled account signs in nowhere and its keys
 * are refused.
 */
export class Migration20261125000000_access_changes extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "users" add column "disabled_at" timestamptz null');
    this.addSql(`create function "shipyard_access_changed"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('shipyard_access', case when TG_TABLE_NAME = 'users' then 'user:' else 'key:' end || OLD.id::text);
        return null;
      end $$`);
    this.addSql(`create trigger "api_keys_access_changed" after delete or update of id, token_hash, revoked_at, expires_at, scopes, user_id on "api_keys"
        for each row execute function "shipyard_access_changed"()`);
    this.addSql(`create trigger "users_access_changed" after delete or update of id, disabled_at on "users"
        for each row execute function "shipyard_access_changed"()`);
    // TRUNCATE has no rows to name: every cached key is forgotten.
    this.addSql(`create function "shipyard_access_truncated"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('shipyard_access', 'all');
        return null;
      end $$`);
    this.addSql(`create trigger "api_keys_access_truncated" after truncate on "api_keys" for each statement execute function "shipyard_access_truncated"()`);
    this.addSql(`create trigger "users_access_truncated" after truncate on "users" for each statement execute function "shipyard_access_truncated"()`);
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger "users_access_truncated" on "users"');
    this.addSql('drop trigger "api_keys_access_truncated" on "api_keys"');
    this.addSql('drop function "shipyard_access_truncated"()');
    this.addSql('drop trigger "users_access_changed" on "users"');
    this.addSql('drop trigger "api_keys_access_changed" on "api_keys"');
    this.addSql('drop function "shipyard_access_changed"()');
    this.addSql('alter table "users" drop column "disabled_at"');
  }
}
