import { Migration } from '@mikro-orm/migrations';

/**
 * A webhook's events are numbered per subscription (1, 2, 3…: gap-free for each receiver), not by
 * one counter for the whole service. Deliveries made before are numbered in their events' order;
 * a redelivery keeps its event's number.
 */
export class Migration20261129040000_webhook_sequence_per_subscription extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_subscriptions" add "last_sequence" bigint not null default '0'`);
    this.addSql(`alter table "webhook_deliveries" add "sequence" bigint null`);
    this.addSql(`
      with numbered as (
        select d.id, dense_rank() over (partition by d.subscription_id order by e.sequence) as n
        from "webhook_deliveries" d join "webhook_events" e on e.id = d.event_id
      )
      update "webhook_deliveries" d set "sequence" = numbered.n from numbered where numbered.id = d.id`);
    this.addSql(`
      update "webhook_subscriptions" s set "last_sequence" = coalesce(
        (select max(d."sequence") from "webhook_deliveries" d where d.subscription_id = s.id), 0)`);
    this.addSql(`alter table "webhook_deliveries" alter column "sequence" set not null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop column "sequence"`);
    this.addSql(`alter table "webhook_subscriptions" drop column "last_sequence"`);
  }
}
