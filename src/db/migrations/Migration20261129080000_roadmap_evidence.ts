import { Migration } from '@mikro-orm/migrations';

/**
 * A build log's health (a status update), the milestones it moved forward and the links it gives;
 * the project's latest health and newest build log beside it, each milestone's build logs, and
 * the indexes a roadmap's status read takes (the open milestones by due date, those that slipped). An existing project's newest build
 * log is found once here; from now on the build-log writes keep it.
 */
export class Migration20261129080000_roadmap_evidence extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "projects" add "health" text null, add "health_set_at" timestamptz null, add "health_post_id" uuid null, add "last_build_log_at" timestamptz null`,
    );
    this.addSql(
      `alter table "projects" add constraint "projects_health_check" check ("health" in ('on_track', 'at_risk', 'off_track'))`,
    );
    this.addSql(
      `alter table "posts" add "health" text null, add "milestone_ids" text[] not null default '{}', add "links" jsonb not null default '[]'`,
    );
    this.addSql(`create index "posts_milestone_ids_idx" on "posts" using gin ("milestone_ids")`);
    this.addSql(
      `create index "milestones_open_due_idx" on "milestones" ("project_id", "due_date") where status in ('planned', 'in_progress')`,
    );
    this.addSql(
      `create index "milestones_open_slipped_idx" on "milestones" ("project_id") where status in ('planned', 'in_progress') and due_date_moves > 0`,
    );
    this.addSql(`alter table "milestones" add "build_log_count" int not null default 0, add "last_build_log_at" timestamptz null`);
    this.addSql(
      `alter table "posts" add constraint "posts_health_check" check ("health" in ('on_track', 'at_risk', 'off_track'))`,
    );
    this.addSql(
      `update "projects" p set "last_build_log_at" = b.newest from (select "project_id", max("created_at") as newest from "posts" where "kind" = 'build_log' and "hidden_at" is null group by "project_id") b where b."project_id" = p."id"`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "projects" drop column "health", drop column "health_set_at", drop column "health_post_id", drop column "last_build_log_at"`,
    );
    this.addSql(`alter table "posts" drop column "health", drop column "milestone_ids", drop column "links"`);
    this.addSql(`drop index "milestones_open_due_idx"`);
    this.addSql(`drop index "milestones_open_slipped_idx"`);
    this.addSql(`alter table "milestones" drop column "build_log_count", drop column "last_build_log_at"`);
  }
}
