/**
 * make sdk: the generated client as its own npm package. Copies codegen/generated/api (the
 * fetch client, the SDK functions and the types; not the server's zod schemas) beside
 * src/index.ts, compiles it to ESM with declarations, and packs it. Prints the tarball's path.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');
const build = join(here, 'build');
rmSync(build, { recursive: true, force: true });
mkdirSync(join(build, 'src'), { recursive: true });
cpSync(join(root, 'codegen/generated/api'), join(build, 'src/generated'), {
  recursive: true,
  filter: (p) => !p.endsWith('zod.gen.ts'),
});
cpSync(join(here, 'src/index.ts'), join(build, 'src/index.ts'));
cpSync(join(root, 'codegen/generated/openapi.json'), join(build, 'openapi.json'));
cpSync(join(here, 'README.md'), join(build, 'README.md'));

const spec = JSON.parse(readFileSync(join(root, 'codegen/generated/openapi.json'), 'utf8')) as {
  info: { version: string };
};
const pkg = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as Record<string, unknown>;
writeFileSync(join(build, 'package.json'), `${JSON.stringify({ ...pkg, version: spec.info.version }, null, 2)}\n`);
writeFileSync(
  join(build, 'tsconfig.json'),
  JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        declaration: true,
        strict: true,
        skipLibCheck: true,
        types: [],
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    },
    null,
    2,
  ),
);

execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(build, 'tsconfig.json')], {
  stdio: 'inherit',
});
const out = execFileSync('npm', ['pack', '--json', '--pack-destination', here], { cwd: build, encoding: 'utf8' });
const [{ filename }] = JSON.parse(out) as { filename: string }[];
process.stdout.write(`${join(here, filename)}\n`);
