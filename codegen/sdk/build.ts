/**
 * make sdk: the generated client as its own npm package. Copies codegen/generated/api (the
 * fetch client, the SDK functions and the types; not the server's zod schemas) beside
 * src/index.ts, compiles it to ESM and to CommonJS (dist/cjs) with declarations, and packs it.
 * Prints the tarball's path.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { eachOperation, type OpenApiDocument } from '../../src/kernel/contract.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');
const build = join(here, 'build');
rmSync(build, { recursive: true, force: true });
mkdirSync(join(build, 'src'), { recursive: true });
cpSync(join(root, 'codegen/generated/api'), join(build, 'src/generated'), {
  recursive: true,
  filter: (p) => !p.endsWith('zod.gen.ts'),
});
for (const file of readdirSync(join(here, 'src'))) cpSync(join(here, 'src', file), join(build, 'src', file));
cpSync(join(root, 'codegen/generated/openapi.json'), join(build, 'openapi.json'));
cpSync(join(here, 'README.md'), join(build, 'README.md'));
cpSync(join(here, 'CHANGELOG.md'), join(build, 'CHANGELOG.md'));

type Spec = {
  info: { version: string; license?: { name: string; identifier?: string; url?: string } };
  paths: Record<string, Record<string, { parameters?: { $ref?: string; name?: string; in?: string }[] }>>;
};
const spec = JSON.parse(readFileSync(join(root, 'codegen/generated/openapi.json'), 'utf8')) as Spec;
const pkg = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as Record<string, unknown>;

// The creates that accept an Idempotency-Key: the SDK sets one on each unless the caller does.
const acceptsKey = (p: { $ref?: string; name?: string; in?: string }) =>
  p.$ref?.endsWith('/IdempotencyKey') || (p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key');
const creates = Object.entries(spec.paths)
  .filter(([, item]) => item.post?.parameters?.some(acceptsKey))
  .map(([path]) => path)
  .sort();
const operations = [...eachOperation(spec as unknown as OpenApiDocument)];
// The operations anybody may call without a key (`x-public`): a keyless client has these only.
// Those of a signed-in person in the web application (`x-session-only`) refuse every key: a
// client has none of them.
const operationsWhere = (mark: 'x-public' | 'x-session-only') =>
  operations
    .filter(({ op }) => op[mark] === true && op.operationId)
    .map(({ op }) => op.operationId!)
    .sort();
const publicOperations = operationsWhere('x-public');
const sessionOnly = operationsWhere('x-session-only');
// The operations whose answer is text that is not JSON (an Atom feed, the contract as YAML): its
// type says string, and hey-api would read such a media type as a Blob.
type Media = { schema?: { type?: string; format?: string } };
const isText = ([type, media]: [string, Media]) =>
  !/^application\/(.+\+)?json\b/.test(type) && media.schema?.type === 'string' && media.schema.format !== 'binary';
const texts = operations
  .filter(({ op }) => {
    const ok = (op.responses as Record<string, { content?: Record<string, Media> }> | undefined)?.['200'];
    return Object.entries(ok?.content ?? {}).some(isText);
  })
  .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
  .sort();
writeFileSync(
  join(build, 'src/meta.ts'),
  `// Written by codegen/sdk/build.ts from the contract the SDK was generated from.
/** The SDK's version: the version of the API contract it was generated from. */
export const SDK_VERSION = ${JSON.stringify(spec.info.version)};
/** The contract's info.version. */
export const API_VERSION = ${JSON.stringify(spec.info.version)};
/** POST paths that accept an Idempotency-Key. */
export const IDEMPOTENT_CREATES: ReadonlySet<string> = new Set(${JSON.stringify(creates)});
/** The operations (method and path) whose answer is read as text: the contract types it a string that is not JSON. */
export const TEXT_ANSWERS: ReadonlySet<string> = new Set(${JSON.stringify(texts)});
/** The operations a client without a key may call: the contract's x-public ones. */
export type PublicOperationName = ${publicOperations.map((o) => JSON.stringify(o)).join(' | ') || 'never'};
/** The operations of a signed-in person in the web application: every key is refused. */
export const SESSION_ONLY: ReadonlySet<string> = new Set(${JSON.stringify(sessionOnly)});
export type SessionOnlyOperationName = ${sessionOnly.map((o) => JSON.stringify(o)).join(' | ') || 'never'};
`,
);

// One licence for the contract and its SDK: the spec's info.license.
const license = spec.info.license;
const spdx = license?.identifier && !license.identifier.startsWith('LicenseRef-') ? license.identifier : undefined;
if (!spdx) {
  writeFileSync(
    join(build, 'LICENSE'),
    `${license?.name ?? 'All rights reserved'}: the Shipyard API contract and this SDK, generated from it, are licensed together${license?.url ? `; terms at ${license.url}` : ''}.\n`,
  );
}
writeFileSync(
  join(build, 'package.json'),
  `${JSON.stringify(
    {
      ...pkg,
      version: spec.info.version,
      license: spdx ?? 'SEE LICENSE IN LICENSE',
      shipyard: { apiVersion: spec.info.version },
      files: [...(pkg.files as string[]), ...(spdx ? [] : ['LICENSE'])],
    },
    null,
    2,
  )}\n`,
);
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

// The same sources again as CommonJS, for projects that `require` it (TypeScript's `module:
// node16` in a CommonJS package included): a copy that its own package.json marks CommonJS,
// compiled by the same NodeNext rules into dist/cjs (marked CommonJS the same way).
const commonjs = `${JSON.stringify({ type: 'commonjs' })}\n`;
cpSync(join(build, 'src'), join(build, 'src-cjs'), { recursive: true });
writeFileSync(join(build, 'src-cjs/package.json'), commonjs);
writeFileSync(
  join(build, 'tsconfig.cjs.json'),
  JSON.stringify({
    extends: './tsconfig.json',
    compilerOptions: { rootDir: 'src-cjs', outDir: 'dist/cjs' },
    include: ['src-cjs'],
  }),
);

for (const old of readdirSync(here)) if (/^shipyard-sdk-.*\.tgz$/.test(old)) rmSync(join(here, old));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
for (const config of ['tsconfig.json', 'tsconfig.cjs.json'])
  execFileSync(process.execPath, [tsc, '-p', join(build, config)], { stdio: 'inherit' });
writeFileSync(join(build, 'dist/cjs/package.json'), commonjs);
const out = execFileSync('npm', ['pack', '--json', '--pack-destination', here], { cwd: build, encoding: 'utf8' });
const [{ filename }] = JSON.parse(out) as { filename: string }[];
process.stdout.write(`${join(here, filename)}\n`);
