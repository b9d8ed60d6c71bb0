/**
 * Developer tool: writes the next migration from the difference between the entities and the
 * schema the existing migrations build (on a throwaway in-memory embedded database).
 *   node --import tsx src/db/new-migration.ts <name>
 * Read the result before committing it: it must run on PostgreSQL 15.
 */
import { writeFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openDatabase } from './database.js';

const name = process.argv[2];
if (!name || !/^[a-z][a-z0-9_]*$/.test(name)) {
  process.stderr.write('usage: new-migration.ts <snake_case_name>\n');
  process.exit(2);
}
const db = await openDatabase({ dataDir: '', inMemory: true });
const up = (await db.orm.schema.getUpdateSchemaSQL({ wrap: false }))
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean);
await db.close();
if (up.length === 0) {
  process.stdout.write('the schema is up to date: nothing to write\n');
  process.exit(0);
}
// Names sort in the order they must run: never before the newest existing one.
const existing =
  readFileSync(fileURLToPath(new URL('./migrations/index.ts', import.meta.url)), 'utf8').match(/Migration(\d{14})_/g) ??
  [];
const latest =
  existing
    .map((m) => m.slice(9, 23))
    .sort()
    .at(-1) ?? '0';
const now = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const stamp = now > latest ? now : String(BigInt(latest) + 1n);
const cls = `Migration${stamp}_${name}`;
const dir = fileURLToPath(new URL('./migrations/', import.meta.url));
const q = (sql: string) => `    this.addSql(\`${sql.replace(/;$/, '').replace(/`/g, '\\`')}\`);`;
writeFileSync(
  `${dir}${cls}.ts`,
  `import { Migration } from '@mikro-orm/migrations';

export class ${cls} extends Migration {
  override async up(): Promise<void> {
${up.map(q).join('\n')}
  }

  override async down(): Promise<void> {
    // TODO(author): write the reverse statements
  }
}
`,
);
const index = `${dir}index.ts`;
const src = readFileSync(index, 'utf8')
  .replace(/(\n\nexport const migrationsList)/, `\nimport { ${cls} } from './${cls}.js';$1`)
  .replace(/\n\];/, `\n  { name: '${cls}', class: ${cls} },\n];`);
writeFileSync(index, src);
process.stdout.write(`wrote src/db/migrations/${cls}.ts (${up.length} statements)\n`);
