import { Migration } from '@mikro-orm/migrations';

/**
 * A one-time message for a session's next page (the new API key's token, shown once after a
 * redirect), sealed with a key derived from the session's cookie secret, which the database
 * does not hold: src/sessions/flash.ts.
 */
export class Migration20261125030000_session_flash extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "sessions" add column "flash" text null');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "sessions" drop column "flash"');
  }
}
