// The service and the CLI run as JavaScript, built by esbuild whenever a source is newer than
// the last build (or npm installed packages since); no TypeScript compiler runs when the server or
// a CLI command starts.
// - dist/src/: src/ and the generated code, transpiled file by file (the server runs this).
// - dist/cli/: the operator CLI bundled with the packages it loads (the ORM, Kysely, pg),
//   a few files instead of hundreds of modules, which Node's module loader would resolve and link
//   one by one on every command.
//
//   node bin/build.mjs          build if anything changed (npm start and bin/shipyard.mjs do this)
//   node bin/build.mjs --force  build anyway
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');
const stamp = join(out, '.built');
const SOURCES = ['src', 'codegen/generated'];
// Files the server reads at run time, beside its code: the contract, and the guide and changelog
// that /docs/guide and /docs/changes show.
const ASSETS = ['codegen/generated/openapi.json', 'docs/api.md', 'docs/api-changes.md'];

function files(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

/** npm's record of the installed packages, rewritten by each install: the CLI bundle holds their code. */
const NPM_INSTALL_RECORD = join(root, 'node_modules', '.package-lock.json');

function newestSource() {
  let newest = Math.max(statSync(fileURLToPath(import.meta.url)).mtimeMs, statSync(NPM_INSTALL_RECORD, { throwIfNoEntry: false })?.mtimeMs ?? 0);
  for (const dir of SOURCES) for (const file of files(dir)) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  for (const asset of ASSETS) newest = Math.max(newest, statSync(join(root, asset)).mtimeMs);
  return newest;
}

function builtAt() {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}

export async function build() {
  const { build: esbuild, stop } = await import('esbuild');
  const entryPoints = SOURCES.flatMap(files).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  // Built aside and swapped in, so a process starting meanwhile never meets half a build.
  const next = `${out}.next-${process.pid}`;
  const previous = `${out}.old-${process.pid}`;
  removeAbandonedBuilds();
  try {
    await esbuild({
      absWorkingDir: root,
      entryPoints,
      outdir: next,
      outbase: '.',
      format: 'esm',
      platform: 'node',
      target: 'node24',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    await bundleCli(esbuild, join(next, 'cli'));
  } finally {
    // esbuild's service process would otherwise live as long as this one: the server's launcher.
    await stop();
  }
  for (const asset of ASSETS) {
    mkdirSync(dirname(join(next, asset)), { recursive: true });
    copyFileSync(join(root, asset), join(next, asset));
  }
  writeFileSync(join(next, '.built'), `${new Date().toISOString()}\n`);
  try {
    renameSync(out, previous);
  } catch {
    // no earlier build, or another build (a server and a command starting at once) moved it aside
  }
  try {
    renameSync(next, out);
  } catch (err) {
    // Another build landed between the two renames: built from the same sources, it serves as well.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    rmSync(next, { recursive: true, force: true });
  }
  rmSync(previous, { recursive: true, force: true });
  return relative(process.cwd(), out) || '.';
}

/**
 * The CLI and its password worker as ES modules sharing chunks. Left out: PGlite and its socket
 * server, which load their WebAssembly and data files from beside their own modules; sharp, a
 * native addon; zxcvbn, loaded as published (bundled and split into chunks, its ZxcvbnFactory came
 * out undefined); and the server (`serve` runs dist/src/main.js: bin/shipyard.mjs).
 */
async function bundleCli(esbuild, outdir) {
  await esbuild({
    absWorkingDir: root,
    // Named, so both sit in dist/cli/ beside the chunks: the password thread starts ./password-worker.js.
    entryPoints: { main: 'src/cli/main.ts', 'password-worker': 'src/users/password-worker.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    external: ['@electric-sql/pglite', '@electric-sql/pglite/*', '@electric-sql/pglite-socket', 'sharp', '@zxcvbn-ts/*'],
    // MikroORM finds its extensions by their class names (Migrator): bundled names must stay.
    keepNames: true,
    // The CommonJS packages in the bundle (pg) call require() for Node's own modules.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    sourcemap: 'linked',
    logLevel: 'warning',
  });
}

/** What a build that was killed midway left beside dist/ (its process is gone). */
function removeAbandonedBuilds() {
  for (const name of readdirSync(root)) {
    const pid = /^dist\.(?:next|old)-(\d+)$/.exec(name)?.[1];
    if (pid && (Number(pid) === process.pid || !isRunning(Number(pid)))) rmSync(join(root, name), { recursive: true, force: true });
  }
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Builds when a source, or npm's install record, is newer than dist/ (or dist/ is missing); otherwise does nothing. */
export async function ensureBuilt(onBuild = () => undefined) {
  if (builtAt() >= newestSource()) return false;
  onBuild();
  await build();
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--force')) await build();
  else await ensureBuilt();
}
