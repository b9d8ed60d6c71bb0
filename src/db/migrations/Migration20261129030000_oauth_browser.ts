import { Migration } from '@mikro-orm/migrations';

/** An authorization request remembers the browser that started it: only that browser may answer it. */
export class Migration20261129030000_oauth_browser extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "oauth_grants" add "browser_hash" varchar(64) null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "oauth_grants" drop column "browser_hash"`);
  }
}
