import { Migration } from '@mikro-orm/migrations';

/**
 * A linked GitHub login is a claim until its owner proves it (src/github/github.proof.ts).
 * Logins linked before this had no proof: they become unverified, and the profile stops
 * showing them until they are proven.
 */
export class Migration20261126185938_github_proof extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "github_accounts" add "challenge" varchar(40) null, add "verified_at" timestamptz null`);
    this.addSql(`update "github_accounts" set "challenge" = 'shipyard-verify-' || substr(md5(random()::text || "id"::text), 1, 16)`);
    this.addSql(`update "users" set "github_login" = null where "github_login" is not null`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "users" u set "github_login" = a."login" from "github_accounts" a where a."user_id" = u."id"`);
    this.addSql(`alter table "github_accounts" drop column "challenge", drop column "verified_at"`);
  }
}
