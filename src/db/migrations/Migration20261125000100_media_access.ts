import { Migration } from '@mikro-orm/migrations';

/**
 * Who may read an image follows the content that shows it (src/media/media.service.ts): these
 * indexes find the posts that show an image and whether it is someone's profile picture.
 */
export class Migration20261125000100_media_access extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index "users_avatar_idx" on "users" ("avatar_media_id") where avatar_media_id is not null');
    this.addSql('create index "posts_media_ids_idx" on "posts" using gin ("media_ids")');
  }

  override async down(): Promise<void> {
    this.addSql('drop index "posts_media_ids_idx"');
    this.addSql('drop index "users_avatar_idx"');
  }
}
