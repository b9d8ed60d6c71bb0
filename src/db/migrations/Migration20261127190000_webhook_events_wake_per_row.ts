import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox is now written by one statement that asks whether anyone listens as it inserts:
 * most such statements insert nothing, and a statement trigger would wake the relay for each of
 * them. A row trigger wakes it only for an event written.
 */
export class Migration20261127190000_webhook_events_wake_per_row extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger "webhook_events_wake_relay" on "webhook_events"`);
    this.addSql(
      `create trigger "webhook_events_wake_relay" after insert on "webhook_events" for each row execute function shipyard_webhook_recorded()`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "webhook_events_wake_relay" on "webhook_events"`);
    this.addSql(
      `create trigger "webhook_events_wake_relay" after insert on "webhook_events" for each statement execute function shipyard_webhook_recorded()`,
    );
  }
}
