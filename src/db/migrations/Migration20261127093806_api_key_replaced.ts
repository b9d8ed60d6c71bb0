import { Migration } from '@mikro-orm/migrations';

/** A regenerated key remembers it was replaced: it cannot be regenerated a second time. */
export class Migration20261127093806_api_key_replaced extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_keys" add "replaced_at" timestamptz null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop column "replaced_at"`);
  }
}
