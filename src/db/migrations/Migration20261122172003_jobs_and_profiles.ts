import { Migration } from '@mikro-orm/migrations';

/** Job listings (with full-text search) and more profile fields. */
export class Migration20261122172003_jobs_and_profiles extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "jobs" ("id" uuid not null, "poster_id" uuid not null, "title" varchar(200) not null, "company" varchar(200) not null, "description" text not null, "location" varchar(200) null, "remote_policy" text not null, "employment_type" text not null, "salary_min" int null, "salary_max" int null, "salary_currency" varchar(3) null, "skills" text[] not null default '{}', "apply_url" varchar(500) not null, "status" text not null default 'open', "expires_at" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "jobs_listing_idx" on "jobs" ("status", "expires_at", "id")`);
    this.addSql(`create index "jobs_poster_idx" on "jobs" ("poster_id")`);
    this.addSql(`alter table "users" add "location" varchar(200) null, add "website" varchar(500) null, add "github_login" varchar(39) null`);
    this.addSql(`alter table "jobs" add constraint "jobs_poster_id_foreign" foreign key ("poster_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "jobs" add constraint "jobs_remote_policy_check" check ("remote_policy" in ('onsite', 'hybrid', 'remote'))`);
    this.addSql(`alter table "jobs" add constraint "jobs_employment_type_check" check ("employment_type" in ('full_time', 'part_time', 'contract', 'internship', 'freelance'))`);
    this.addSql(`alter table "jobs" add constraint "jobs_status_check" check ("status" in ('open', 'closed'))`);
    this.addSql(`alter table "jobs" add constraint "jobs_salary_check" check ((salary_min is null and salary_max is null and salary_currency is null) or (salary_min is not null and salary_max is not null and salary_currency is not null and salary_min <= salary_max))`);
    this.addSql(`alter table "jobs" add column "search" tsvector generated always as (
      setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
      setweight(to_tsvector('english', coalesce(company, '') || ' ' || shipyard_words(skills)), 'B') ||
      setweight(to_tsvector('english', coalesce(description, '')), 'C')) stored`);
    this.addSql(`create index "jobs_search_idx" on "jobs" using gin ("search")`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "jobs" cascade`);
    this.addSql(`alter table "users" drop column "location", drop column "website", drop column "github_login"`);
  }
}
