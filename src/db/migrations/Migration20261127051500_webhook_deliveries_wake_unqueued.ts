import { Migration } from '@mikro-orm/migrations';

/**
 * The relay now queues the deliveries it makes as it makes them: only a delivery added unqueued
 * (a ping, a redelivery) needs to wake it, so its trigger becomes a row trigger with a condition.
 */
export class Migration20261127051500_webhook_deliveries_wake_unqueued extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger "webhook_deliveries_wake_relay" on "webhook_deliveries"`);
    this.addSql(
      `create trigger "webhook_deliveries_wake_relay" after insert on "webhook_deliveries" for each row when (new.enqueued_at is null) execute function shipyard_webhook_recorded()`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "webhook_deliveries_wake_relay" on "webhook_deliveries"`);
    this.addSql(
      `create trigger "webhook_deliveries_wake_relay" after insert on "webhook_deliveries" for each statement execute function shipyard_webhook_recorded()`,
    );
  }
}
