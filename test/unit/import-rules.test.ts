/**
 * The import rules fail on a forbidden import: a throwaway tree with one bad import each is
 * checked by the same script `make lint` runs (lint/check-imports.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../lint/check-imports.ts', import.meta.url));
const MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the check on a tree of files; returns its exit code and what it said. */
function check(files: Record<string, string>): { code: number; out: string } {
  dir = mkdtempSync(join(tmpdir(), 'import-rules-'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true } }));
  symlinkSync(MODULES, join(dir, 'node_modules')); // so that a package import resolves as in the repository
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
  it('passes a tree that keeps them', () => {
    const r = check({
      'src/kernel/ids.ts': "import { randomUUID } from 'node:crypto';\nexport const id = randomUUID;\n",
      'src/db/reads.ts': "import { id } from '../kernel/ids.js';\nexport const r = id;\n",
      'src/projects/projects.service.ts': "import { r } from '../db/reads.js';\nexport const s = r;\n",
      'src/projects/projects.routes.ts':
        "import { s } from './projects.service.js';\nimport { h } from '../http/kit/handler.js';\nexport const x = [s, h];\n",
      'src/http/kit/handler.ts': "import type { Request } from 'express';\nexport const h = (r: Request) => r;\n",
      // The pipeline calls an area, and that area's routes file uses the kit: no cycle.
      'src/http/authenticate.ts': "import { s } from '../projects/projects.service.js';\nexport const a = s;\n",
    });
    expect(r.out).toContain('import rules hold');
    expect(r.code).toBe(0);
  });

  it('refuses a routes file that imports the pipeline, and a kit that imports an area', () => {
    const r = check({
      'src/projects/projects.service.ts': 'export const s = 1;\n',
      'src/projects/projects.routes.ts': "import { a } from '../http/authenticate.js';\nexport const x = a;\n",
      'src/http/authenticate.ts': 'export const a = 1;\n',
      'src/mcp/kit/tool.ts': "import { s } from '../../projects/projects.service.js';\nexport const t = s;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'routes-and-tools-use-the-kits: src/projects/projects.routes.ts → src/http/authenticate.ts',
    );
    expect(r.out).toContain('kits-import-no-area: src/mcp/kit/tool.ts → src/projects/projects.service.ts');
  });

  it('refuses the MCP endpoint importing the REST pipeline, and takes its kit', () => {
    const r = check({
      'src/http/authenticate.ts': 'export const a = 1;\n',
      'src/http/kit/bearer.ts': 'export const b = 1;\n',
      'src/mcp/mcp.routes.ts':
        "import { a } from '../http/authenticate.js';\nimport { b } from '../http/kit/bearer.js';\nexport const m = [a, b];\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('mcp-uses-the-http-kit-only: src/mcp/mcp.routes.ts → src/http/authenticate.ts');
    expect(r.out).not.toContain('src/http/kit/bearer.ts');
  });

  it('refuses a routes or tools file that presents a record itself', () => {
    const r = check({
      'src/projects/projects.presenter.ts': 'export const presentProject = (p: object) => p;\n',
      'src/projects/projects.service.ts':
        "import { presentProject } from './projects.presenter.js';\nexport const getProject = () => presentProject({});\n",
      'src/projects/projects.routes.ts':
        "import { getProject } from './projects.service.js';\nexport const h = getProject;\n",
      'src/projects/projects.tools.ts':
        "import { presentProject } from './projects.presenter.js';\nexport const t = presentProject;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'adapters-send-what-services-answer: src/projects/projects.tools.ts → src/projects/projects.presenter.ts',
    );
    expect(r.out).not.toContain('src/projects/projects.routes.ts →');
  });

  it('refuses a kernel file that uses a package', () => {
    const r = check({ 'src/kernel/ids.ts': "import * as z from 'zod';\nexport const id = z.string();\n" });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/kernel-uses-no-framework: src\/kernel\/ids\.ts → .*node_modules\/zod\//);
  });

  it("refuses express in an area's service", () => {
    const r = check({
      'src/jobs/jobs.service.ts': "import type { Request } from 'express';\nexport const s = (r: Request) => r;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/core-never-imports-express: src\/jobs\/jobs\.service\.ts → .*node_modules\/express\//);
  });

  it('refuses db/ importing an area, and anyone but db/ importing the entity registry', () => {
    const r = check({
      'src/db/reads.ts': "import { s } from '../jobs/jobs.service.js';\nexport const r = s;\n",
      'src/jobs/jobs.service.ts': 'export const s = 1;\n',
      'src/db/entities.ts': 'export const entities = [];\n',
      'src/kernel/ids.ts': "import { entities } from '../db/entities.js';\nexport const id = entities;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('db-below-the-areas: src/db/reads.ts → src/jobs/jobs.service.ts');
    expect(r.out).toContain('only-db-imports-the-entity-registry: src/kernel/ids.ts → src/db/entities.ts');
  });

  it('refuses a file that imports itself through others', () => {
    const r = check({
      'src/jobs/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/jobs/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('no-module-cycles: src/jobs/a.ts → src/jobs/b.ts');
  });

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
    expect(r.out).toContain('no-folder-cycles: src/jobs → src/radar');
  });
});
