import { Migration } from '@mikro-orm/migrations';

/** Images shown with a post. */
export class Migration20261122172000_post_media extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "posts" add "media_ids" text[] not null default '{}'`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "posts" drop column "media_ids"`);
  }
}
