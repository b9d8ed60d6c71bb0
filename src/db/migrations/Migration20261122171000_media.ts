import { Migration } from '@mikro-orm/migrations';

/** Uploaded images (bytes are stored outside the database, content-addressed). */
export class Migration20261122171000_media extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "media" ("id" uuid not null, "uploader_id" uuid not null, "sha256" varchar(64) not null, "content_type" text not null, "byte_size" int not null, "width" int not null, "height" int not null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "media_uploader_idx" on "media" ("uploader_id")`);
    this.addSql(`create index "media_sha256_idx" on "media" ("sha256")`);
    this.addSql(`alter table "media" add constraint "media_uploader_id_foreign" foreign key ("uploader_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "media" add constraint "media_content_type_check" check ("content_type" in ('image/png', 'image/jpeg', 'image/gif', 'image/webp'))`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "media" cascade`);
  }
}
