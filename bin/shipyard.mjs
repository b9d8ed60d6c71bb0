#!/usr/bin/env node
// The operator CLI. `npx shipyard …` runs it on the project's pinned Node 24.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`shipyard: needs Node 24 or newer (this is ${process.version}); run it as \`npx shipyard …\` from the project directory.\n`);
  process.exit(1);
}
const { tsImport } = await import('tsx/esm/api');
await tsImport('../src/cli/main.ts', import.meta.url);
