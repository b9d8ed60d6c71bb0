import { Migration } from '@mikro-orm/migrations';

/**
 * The full-text indexes write straight into the index (fastupdate off) instead of into a
 * pending list that autovacuum merges later. Every search scans the pending list linearly (up
 * to 4 MB per index): at 100k posts the search of `make bench` took 7.2 ms of PostgreSQL time
 * with 20k new posts pending against 4.6 ms merged, and 18 ms against 4.5 ms right after the
 * seed's bulk load. Search is read far more often than posts, projects, jobs and profiles are
 * written, so the few extra index page writes per insert are the cheaper side. The lists
 * already pending are merged now.
 */
const INDEXES = ['posts_search_idx', 'projects_search_idx', 'jobs_search_idx', 'users_search_idx'];

export class Migration20261123000000_search_fastupdate_off extends Migration {
  override async up(): Promise<void> {
    for (const index of INDEXES) {
      this.addSql(`alter index "${index}" set (fastupdate = off)`);
      this.addSql(`select gin_clean_pending_list('"${index}"'::regclass)`);
    }
  }

  override async down(): Promise<void> {
    for (const index of INDEXES) this.addSql(`alter index "${index}" reset (fastupdate)`);
  }
}
