import { Migration } from '@mikro-orm/migrations';

/**
 * A roadmap's positions are checked at commit: a move shifts a range and sets the moved
 * milestone in separate statements, and only the end state must be 1..n without duplicates
 * (src/milestones/milestones.service.ts). PostgreSQL cannot alter a unique constraint's
 * deferral, so it is made again.
 */
export class Migration20261125000200_milestone_positions_deferred extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "milestones" drop constraint "milestones_project_position_unique"');
    this.addSql(
      'alter table "milestones" add constraint "milestones_project_position_unique" unique ("project_id", "position") deferrable initially deferred',
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table "milestones" drop constraint "milestones_project_position_unique"');
    this.addSql(
      'alter table "milestones" add constraint "milestones_project_position_unique" unique ("project_id", "position") deferrable initially immediate',
    );
  }
}
