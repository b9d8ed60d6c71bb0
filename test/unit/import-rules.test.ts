/**
 * The import rules fail on a forbidden import: a throwaway tree with one bad import each is
 * checked by the same script `make lint` runs (lint/check-imports.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../lint/check-imports.ts', import.meta.url));
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the check on a tree of files; returns its exit code and what it said. */
function check(files: Record<string, string>): { code: number; out: string } {
  dir = mkdtempSync(join(tmpdir(), 'import-rules-'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  try {
    const out = execFileSync(process.execPath, ['--import', import.meta.resolve('tsx'), SCRIPT], {
      cwd: dir,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { code: 0, out };
  } catch (err) {
    const e = err as { status: number; stderr: string; stdout: string };
    return { code: e.status, out: e.stderr + e.stdout };
  }
}

describe('the import rules of make lint', { timeout: 60_000 }, () => {
  it('refuses a kernel file that imports the HTTP layer', () => {
    const r = check({
      'src/kernel/problem.ts': "import { log } from '../http/log.js';\nexport const p = log;\n",
      'src/http/log.ts': 'export const log = 1;\n',
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('kernel-imports-nothing-of-ours: src/kernel/problem.ts → src/http/log.ts');
  });

  it("refuses an area's service that imports an adapter", () => {
    const r = check({
      'src/projects/projects.service.ts': "import { h } from '../http/handler.js';\nexport const s = h;\n",
      'src/http/handler.ts': 'export const h = 1;\n',
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('core-never-imports-an-adapter: src/projects/projects.service.ts → src/http/handler.ts');
  });

  it('refuses a new cycle between folders', () => {
    const r = check({
      'src/jobs/jobs.service.ts': "import { b } from '../radar/radar.service.js';\nexport const a = b;\n",
      'src/radar/radar.service.ts': "import { a } from '../jobs/jobs.service.js';\nexport const b = () => a;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('no-folder-cycles (new): src/jobs → src/radar');
  });
});
