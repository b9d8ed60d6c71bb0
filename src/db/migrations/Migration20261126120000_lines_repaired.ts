import { Migration } from '@mikro-orm/migrations';

// The rule for one-line text as it stood when this migration was written (src/kernel/text.ts
// holds the living one), in PostgreSQL's regular expressions. NUL cannot be stored, so the
// controls start at U+0001.
const FORBIDDEN = '\\x01-\\x1F\\x7F-\\x9F\\u2027-\\u202E\\u2066-\\u2069';
/** White space that JavaScript's trim() removes and that is not already FORBIDDEN. */
const SPACE = ' \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000\\uFEFF';
const INVISIBLE = `${SPACE}\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u2060-\\u2064\\u206A-\\u206F\\u2800\\u3164\\uFE00-\\uFE0F\\uFFA0\\uFFF9-\\uFFFB`;

/**
 * Names and titles stored before the API refused what is not one line (white space only,
 * zero-width characters alone, controls, bidi overrides). Each is repaired the way the
 * presenters show it (presentableLine): what the rule forbids becomes a space, white space
 * around it goes, and a value left with nothing visible gets a fallback (a project its slug,
 * a display name the username). Optional one-line text (taglines, locations) only loses what
 * is forbidden. Rows that already hold to the rule are not touched.
 */
export class Migration20261126120000_lines_repaired extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function shipyard_repaired_line(v text, fallback text) returns text
      language sql immutable as $$
        select case when t ~ '[^${INVISIBLE}]' then t else fallback end
        from (select regexp_replace(regexp_replace(v, '[${FORBIDDEN}]', ' ', 'g'), '^[${SPACE}]+|[${SPACE}]+$', '', 'g') as t) cleaned
      $$`);
    this.addSql(`
      create function shipyard_repaired_optional_line(v text) returns text
      language sql immutable as $$ select regexp_replace(v, '[${FORBIDDEN}]', ' ', 'g') $$`);
    const lines: [table: string, column: string, fallback: string][] = [
      ['projects', 'name', 'slug'],
      ['milestones', 'title', `'Untitled milestone'`],
      ['posts', 'title', `'Untitled'`],
      ['jobs', 'title', `'Untitled job'`],
      ['jobs', 'company', `'Unnamed company'`],
      ['users', 'display_name', 'username'],
      ['api_keys', 'name', `'API key'`],
    ];
    for (const [table, column, fallback] of lines) {
      this.addSql(
        `update "${table}" set "${column}" = shipyard_repaired_line("${column}", ${fallback}) where "${column}" is distinct from shipyard_repaired_line("${column}", ${fallback})`,
      );
    }
    for (const [table, column] of [
      ['projects', 'tagline'],
      ['jobs', 'location'],
      ['users', 'location'],
    ]) {
      this.addSql(
        `update "${table}" set "${column}" = shipyard_repaired_optional_line("${column}") where "${column}" is distinct from shipyard_repaired_optional_line("${column}")`,
      );
    }
    this.addSql(`
      update projects set links = (
        select coalesce(jsonb_agg(jsonb_set(l, '{label}', to_jsonb(shipyard_repaired_line(l->>'label', 'Link'))) order by i), '[]'::jsonb)
        from jsonb_array_elements(links) with ordinality as e(l, i)
      )
      where exists (
        select 1 from jsonb_array_elements(links) l where l->>'label' is distinct from shipyard_repaired_line(l->>'label', 'Link')
      )`);
    this.addSql('drop function shipyard_repaired_line(text, text)');
    this.addSql('drop function shipyard_repaired_optional_line(text)');
  }

  override async down(): Promise<void> {
    // Nothing to undo: the values it replaced could not be shown.
  }
}
