import { Migration } from '@mikro-orm/migrations';

/** When each feed's first page last changed (src/feeds/feed-mark.entity.ts): its Last-Modified. */
export class Migration20261201072641_feed_marks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "feed_marks" ("page" varchar(300) not null, "digest" varchar(64) not null, "modified_at" timestamptz not null, primary key ("page"))`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "feed_marks"`);
  }
}
