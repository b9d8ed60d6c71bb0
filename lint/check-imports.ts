/**
 * `make lint`'s import check: dependency-cruiser with the house rules (.dependency-cruiser.cjs).
 * Every rule must hold, the folder cycles' included (a cycle is said once, from its smallest
 * folder, however many files make it). The entity registry, which the rules leave out of the
 * graph, is checked here: only db/ may import it.
 *   node --import tsx lint/check-imports.ts
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Violation = {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: { name: string }[];
};

const REGISTRY = 'src/db/entities.ts';
const REGISTRY_READERS = ['src/db/database.ts', 'src/db/reads.ts', 'src/db/entities.ts'];
const DEPCRUISE = fileURLToPath(new URL('../node_modules/.bin/depcruise', import.meta.url));
/** The rules; the folder cruised is ./src (a test points both at a throwaway tree). */
const config = fileURLToPath(new URL('../.dependency-cruiser.cjs', import.meta.url));

function cruise(): Violation[] {
  let out: string;
  try {
    out = execFileSync(DEPCRUISE, ['src', '--config', config, '--output-type', 'json'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (err) {
    out = (err as { stdout?: string }).stdout ?? ''; // it exits non-zero when a rule is broken
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

/** A cycle as one line, starting at its smallest folder so that the same cycle reads the same. */
function cycleKey(v: Violation): string {
  const ring = [v.from, ...(v.cycle ?? []).map((c) => c.name)];
  ring.pop(); // the cycle ends where it started
  const start = ring.indexOf([...ring].sort()[0]!);
  return [...ring.slice(start), ...ring.slice(0, start)].join(' → ');
}

/** Files outside db/ that import the entity registry (which the cruise leaves out). */
function registryImporters(): string[] {
  const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  return files
    .map((f) => join('src', f))
    .filter((file) => !REGISTRY_READERS.includes(file))
    .filter((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from\s+'(\.[^']*)'/g)].some(
        (m) => relative('.', resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'))) === REGISTRY,
      ),
    );
}

const violations = cruise();
const folderCycles = [...new Set(violations.filter((v) => v.rule.name === 'no-folder-cycles').map(cycleKey))].sort();
const others = violations.filter((v) => v.rule.name !== 'no-folder-cycles');

const lines = [
  ...others.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`),
  ...registryImporters().map((f) => `only-db-imports-the-entity-registry: ${f} → ${REGISTRY}`),
  ...folderCycles.map((c) => `no-folder-cycles: ${c}`),
];
if (lines.length) {
  process.stderr.write(`import rules (.dependency-cruiser.cjs, docs/architecture.md) broken:\n  ${lines.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write('import rules hold: no forbidden import, no module or folder cycle\n');
