import { Migration } from '@mikro-orm/migrations';

/** A profile picture (an uploaded image) on users. */
export class Migration20261122172002_user_avatar extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "users" add "avatar_media_id" uuid null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "users" drop column "avatar_media_id"`);
  }
}
