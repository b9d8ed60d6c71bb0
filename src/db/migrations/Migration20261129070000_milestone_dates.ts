import { Migration } from '@mikro-orm/migrations';

/**
 * A milestone's start date, and its due date's history: every change kept as a row, and the
 * history in brief beside the date. An existing milestone's due date is its original one.
 */
export class Migration20261129070000_milestone_dates extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "milestone_due_date_changes" ("id" uuid not null, "milestone_id" uuid not null, "from_date" date null, "to_date" date null, "reason" varchar(500) null, "changed_at" timestamptz not null, "key_id" uuid null, "key_name" varchar(100) null, "channel" text null, "client" varchar(200) null, primary key ("id"))`,
    );
    this.addSql(
      `create index "milestone_due_date_changes_milestone_idx" on "milestone_due_date_changes" ("milestone_id", "id")`,
    );
    this.addSql(
      `alter table "milestones" add "start_date" date null, add "original_due_date" date null, add "due_date_moves" int not null default 0, add "earlier_due_dates" text[] not null default '{}', add "due_date_moved_at" timestamptz null, add "due_date_reason" varchar(500) null`,
    );
    this.addSql(`update "milestones" set "original_due_date" = "due_date" where "due_date" is not null`);
    this.addSql(
      `alter table "milestone_due_date_changes" add constraint "milestone_due_date_changes_milestone_id_foreign" foreign key ("milestone_id") references "milestones" ("id") on delete cascade`,
    );
    this.addSql(
      `alter table "milestone_due_date_changes" add constraint "milestone_due_date_changes_channel_check" check ("channel" in ('rest', 'mcp'))`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "milestone_due_date_changes"`);
    this.addSql(
      `alter table "milestones" drop column "start_date", drop column "original_due_date", drop column "due_date_moves", drop column "earlier_due_dates", drop column "due_date_moved_at", drop column "due_date_reason"`,
    );
  }
}
