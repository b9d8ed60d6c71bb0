import { Migration } from '@mikro-orm/migrations';

/** GitHub Insight: the linked account and its synced repositories. */
export class Migration20261122172004_github extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "github_accounts" ("id" uuid not null, "user_id" uuid not null, "login" varchar(39) not null, "name" varchar(255) null, "avatar_url" varchar(500) null, "html_url" varchar(500) null, "public_repos" int null, "followers" int null, "sync_status" text not null default 'never', "sync_message" text null, "synced_at" timestamptz null, "attempted_at" timestamptz null, "retry_after" timestamptz null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "github_accounts" add constraint "github_accounts_user_id_unique" unique ("user_id")`);
    this.addSql(`create table "github_repos" ("id" uuid not null, "account_id" uuid not null, "name" varchar(100) not null, "full_name" varchar(200) not null, "description" text null, "html_url" varchar(500) not null, "stars" int not null, "forks" int not null, "language" varchar(100) null, "topics" text[] not null default '{}', "pushed_at" timestamptz null, "fork" boolean not null, "archived" boolean not null, "languages" jsonb not null, "weekly_commits" jsonb null, primary key ("id"))`);
    this.addSql(`create index "github_repos_account_idx" on "github_repos" ("account_id", "pushed_at")`);
    this.addSql(`alter table "github_accounts" add constraint "github_accounts_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "github_accounts" add constraint "github_accounts_sync_status_check" check ("sync_status" in ('never', 'ok', 'partial', 'rate_limited', 'not_found', 'error'))`);
    this.addSql(`alter table "github_repos" add constraint "github_repos_account_id_foreign" foreign key ("account_id") references "github_accounts" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "github_repos" cascade`);
    this.addSql(`drop table if exists "github_accounts" cascade`);
  }
}
