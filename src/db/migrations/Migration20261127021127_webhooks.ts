import { Migration } from '@mikro-orm/migrations';

/** Webhooks (src/webhooks/): subscriptions, the outbox of events, deliveries and their attempts. */

export class Migration20261127021127_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function shipyard_webhook_recorded() returns trigger language plpgsql as $$
      begin
        perform pg_notify('shipyard_webhooks', '');
        return null;
      end $$`);
    this.addSql(`create table "webhook_events" ("id" uuid not null, "sequence" bigserial, "project_id" uuid not null, "type" varchar(40) not null, "data" text not null, "occurred_at" timestamptz not null, "dispatched_at" timestamptz null, primary key ("id"))`);
    this.addSql(`alter table "webhook_events" add constraint "webhook_events_sequence_unique" unique ("sequence")`);
    this.addSql(`create index "webhook_events_occurred_at_idx" on "webhook_events" ("occurred_at")`);
    this.addSql(`create index "webhook_events_pending_idx" on "webhook_events" ("sequence") where "dispatched_at" is null`);
    this.addSql(`create table "webhook_subscriptions" ("id" uuid not null, "project_id" uuid not null, "url" varchar(2000) not null, "events" text[] not null, "active" boolean not null default true, "description" varchar(500) not null default '', "secret" text not null, "previous_secret" text null, "previous_secret_until" timestamptz null, "failing_since" timestamptz null, "disabled_at" timestamptz null, "disabled_reason" varchar(300) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "webhook_subscriptions_project_idx" on "webhook_subscriptions" ("project_id")`);
    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "subscription_id" uuid not null, "event_id" uuid not null, "state" text not null default 'pending', "manual" boolean not null default false, "attempts" int not null default 0, "created_at" timestamptz not null, "last_attempt_at" timestamptz null, "delivered_at" timestamptz null, "enqueued_at" timestamptz null, primary key ("id"))`);
    this.addSql(`create index "webhook_deliveries_subscription_idx" on "webhook_deliveries" ("subscription_id", "created_at")`);
    this.addSql(`create index "webhook_deliveries_unqueued_idx" on "webhook_deliveries" ("created_at") where "enqueued_at" is null`);
    this.addSql(`create table "webhook_attempts" ("id" uuid not null, "delivery_id" uuid not null, "at" timestamptz not null, "status_code" int null, "duration_ms" int not null, "error" varchar(300) null, "response_excerpt" varchar(1024) null, primary key ("id"))`);
    this.addSql(`create index "webhook_attempts_delivery_idx" on "webhook_attempts" ("delivery_id", "at")`);
    this.addSql(`create trigger "webhook_events_wake_relay" after insert on "webhook_events" for each statement execute function shipyard_webhook_recorded()`);
    this.addSql(`alter table "webhook_subscriptions" add constraint "webhook_subscriptions_project_id_foreign" foreign key ("project_id") references "projects" ("id") on delete cascade`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_subscription_id_foreign" foreign key ("subscription_id") references "webhook_subscriptions" ("id") on delete cascade`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "webhook_events" ("id") on delete cascade`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'delivered', 'failed'))`);
    this.addSql(`create trigger "webhook_deliveries_wake_relay" after insert on "webhook_deliveries" for each statement execute function shipyard_webhook_recorded()`);
    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "webhook_attempts"`);
    this.addSql(`drop table "webhook_deliveries"`);
    this.addSql(`drop table "webhook_subscriptions"`);
    this.addSql(`drop table "webhook_events"`);
    this.addSql(`drop function shipyard_webhook_recorded()`);
  }
}
