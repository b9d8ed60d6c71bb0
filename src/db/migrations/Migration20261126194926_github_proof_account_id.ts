import { Migration } from '@mikro-orm/migrations';

/**
 * A proof binds GitHub's account id, not only the login (src/github/github.proof.ts). Proofs made
 * before this recorded no id, so they cannot tell a renamed or re-registered login from the one
 * that showed the code: they become unverified with a fresh code, as the first proof migration
 * did, and the repositories fetched for a login that is no longer proven are dropped.
 */
export class Migration20261126194926_github_proof_account_id extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "github_accounts" add "github_id" bigint null`);
    this.addSql(`update "users" u set "github_login" = null from "github_accounts" a where a."user_id" = u."id" and a."verified_at" is not null`);
    this.addSql(
      `update "github_accounts" set "verified_at" = null, "challenge" = 'shipyard-verify-' || substr(md5(random()::text || "id"::text), 1, 16) where "verified_at" is not null`,
    );
    this.addSql(`delete from "github_repos" r using "github_accounts" a where r."account_id" = a."id" and a."verified_at" is null`);
    this.addSql(`create unique index "github_accounts_verified_login_key" on "github_accounts" (lower("login")) where "verified_at" is not null`);
    this.addSql(`create unique index "github_accounts_verified_github_id_key" on "github_accounts" ("github_id") where "verified_at" is not null`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "github_accounts_verified_github_id_key"`);
    this.addSql(`drop index "github_accounts_verified_login_key"`);
    this.addSql(`alter table "github_accounts" drop column "github_id"`);
  }
}
