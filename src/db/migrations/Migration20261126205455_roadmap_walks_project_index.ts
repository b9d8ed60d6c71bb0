import { Migration } from '@mikro-orm/migrations';

/** A project's deletion finds its walks by index (src/milestones/roadmap-walk.entity.ts). */
export class Migration20261126205455_roadmap_walks_project_index extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "roadmap_walks_project_idx" on "roadmap_walks" ("project_id")`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "roadmap_walks_project_idx"`);
  }
}
