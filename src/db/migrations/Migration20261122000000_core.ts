import { Migration } from '@mikro-orm/migrations';

/** The core: users, API keys, projects and members, milestones, posts. PostgreSQL 15 compatible. */
export class Migration20261122000000_core extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "users" ("id" uuid not null, "username" varchar(39) not null, "email" varchar(254) not null, "display_name" varchar(100) not null, "bio" text not null default '', "skills" text[] not null default '{}', "password_hash" varchar(255) null, "is_admin" boolean not null default false, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "users" add constraint "users_username_unique" unique ("username")`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email")`);
    this.addSql(`create table "projects" ("id" uuid not null, "owner_id" uuid not null, "name" varchar(100) not null, "slug" varchar(64) not null, "tagline" varchar(140) not null default '', "description" text not null default '', "stage" text not null default 'idea', "visibility" text not null default 'public', "tags" text[] not null default '{}', "links" jsonb not null default '[]', "looking_for_collaborators" boolean not null default false, "wanted_skills" text[] not null default '{}', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "projects" add constraint "projects_owner_slug_unique" unique ("owner_id", "slug")`);
    this.addSql(`alter table "projects" add constraint "projects_stage_check" check ("stage" in ('idea', 'building', 'launched', 'paused'))`);
    this.addSql(`alter table "projects" add constraint "projects_visibility_check" check ("visibility" in ('public', 'private'))`);
    this.addSql(`create table "project_members" ("id" uuid not null, "project_id" uuid not null, "user_id" uuid not null, "added_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "project_members_user_idx" on "project_members" ("user_id")`);
    this.addSql(`alter table "project_members" add constraint "project_members_project_user_unique" unique ("project_id", "user_id")`);
    this.addSql(`create table "milestones" ("id" uuid not null, "project_id" uuid not null, "title" varchar(200) not null, "description" text null, "status" text not null default 'planned', "due_date" date null, "completed_at" timestamptz null, "position" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`alter table "milestones" add constraint "milestones_project_position_unique" unique ("project_id", "position") deferrable initially immediate`);
    this.addSql(`alter table "milestones" add constraint "milestones_status_check" check ("status" in ('planned', 'in_progress', 'done', 'cancelled'))`);
    this.addSql(`create table "posts" ("id" uuid not null, "author_id" uuid not null, "kind" text not null default 'post', "title" varchar(200) not null, "body" text not null, "tags" text[] not null default '{}', "project_id" uuid null, "comment_count" int not null default 0, "hidden_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "posts_project_kind_idx" on "posts" ("project_id", "kind", "id")`);
    this.addSql(`create index "posts_author_idx" on "posts" ("author_id")`);
    this.addSql(`alter table "posts" add constraint "posts_kind_check" check ("kind" in ('post', 'build_log'))`);
    this.addSql(`create table "api_keys" ("id" uuid not null, "user_id" uuid not null, "name" varchar(100) not null, "token_hash" varchar(64) not null, "last4" varchar(4) not null, "scopes" text[] not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"))`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_token_hash_unique" unique ("token_hash")`);
    this.addSql(`create index "api_keys_user_idx" on "api_keys" ("user_id")`);
    this.addSql(`alter table "projects" add constraint "projects_owner_id_foreign" foreign key ("owner_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "project_members" add constraint "project_members_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade`);
    this.addSql(`alter table "project_members" add constraint "project_members_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "milestones" add constraint "milestones_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade`);
    this.addSql(`alter table "posts" add constraint "posts_author_id_foreign" foreign key ("author_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "posts" add constraint "posts_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete set null`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_keys" cascade`);
    this.addSql(`drop table if exists "posts" cascade`);
    this.addSql(`drop table if exists "milestones" cascade`);
    this.addSql(`drop table if exists "project_members" cascade`);
    this.addSql(`drop table if exists "projects" cascade`);
    this.addSql(`drop table if exists "users" cascade`);
  }
}
