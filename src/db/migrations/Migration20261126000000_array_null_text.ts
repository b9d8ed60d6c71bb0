import { Migration } from '@mikro-orm/migrations';

/** The text arrays that people (or GitHub) fill, each as table and column. */
const COLUMNS = [
  ['posts', 'tags'],
  ['projects', 'tags'],
  ['projects', 'wanted_skills'],
  ['users', 'skills'],
  ['jobs', 'skills'],
  ['github_repos', 'topics'],
] as const;

/**
 * A tag, skill or topic "null" was written as NULL (src/db/text-array.ts), and every read of
 * its row then failed: each such NULL becomes the text "null" again, which is all it can have
 * been (the contract never accepts a null element).
 */
export class Migration20261126000000_array_null_text extends Migration {
  override async up(): Promise<void> {
    for (const [table, column] of COLUMNS) {
      this.addSql(
        `update "${table}" set "${column}" = array_replace("${column}", null, 'null') where array_position("${column}", null) is not null`,
      );
    }
  }

  override async down(): Promise<void> {
    // Nothing to undo: the text is what was sent.
  }
}
