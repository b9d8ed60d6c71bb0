import { Migration } from '@mikro-orm/migrations';

/**
 * When a post or a profile first showed an image: uploads never shown are removed after a grace
 * period (src/media/media.service.ts). Every image a post or a profile shows today counts as
 * shown since it was uploaded. One no one shows now cannot be told from one never shown: it is
 * left unattached, its uploader's alone to read already, and goes with the next sweep.
 */
export class Migration20261126130000_media_attached extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "media" add column "attached_at" timestamptz null');
    this.addSql(
      `update "media" set "attached_at" = "created_at"
       where exists (select 1 from "posts" p where p."media_ids" @> array["media"."id"::text])
          or exists (select 1 from "users" u where u."avatar_media_id" = "media"."id")`,
    );
    this.addSql(
      'create index "media_unattached_idx" on "media" ("created_at") where "attached_at" is null',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index "media_unattached_idx"');
    this.addSql('alter table "media" drop column "attached_at"');
  }
}
