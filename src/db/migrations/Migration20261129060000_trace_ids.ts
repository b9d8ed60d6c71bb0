import { Migration } from '@mikro-orm/migrations';

/**
 * The trace a write ran in: on its security-log entry (its trace id), and on the outbox events it
 * recorded (the W3C traceparent), so that their deliveries continue that trace.
 */
export class Migration20261129060000_trace_ids extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "security_events" add "trace_id" varchar(32) null`);
    this.addSql(`alter table "webhook_events" add "trace_parent" varchar(55) null`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "security_events" drop column "trace_id"`);
    this.addSql(`alter table "webhook_events" drop column "trace_parent"`);
  }
}
