import { Migration } from '@mikro-orm/migrations';

/** A write's security-log entry names what it changed (its name or title as it was then), beside its path. */
export class Migration20261129050000_security_log_resource_name extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "security_events" add "resource_name" varchar(200) null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "security_events" drop column "resource_name"`);
  }
}
