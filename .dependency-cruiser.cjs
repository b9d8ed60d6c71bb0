/**
 * The import rules of the house (docs/architecture.md, "Layers"), checked by `make lint`.
 *
 *   kernel/      problems, actor, ids, cursors, scopes, limits, the contract as data: imports nothing of ours
 *   db/          the database: imports the kernel (and the entity registry, below)
 *   <area>/      entity · queries · service · presenter (the core): import the kernel, db/ and other
 *                areas' cores; never an adapter
 *   adapters     <area>/*.routes.ts, <area>/*.tools.ts, <area>/*.provider.ts, http/, mcp/, web/, cli/, and the files at
 *                the top of src/ (app, main, config, routes): may import any core; a routes or
 *                tools file imports of http/ and mcp/ only their kits (http/kit/, mcp/kit/), which
 *                import no area, so that no folder cycle can run through an adapter
 *
 * The one named exception: src/db/entities.ts, the entity registry MikroORM needs, imports every
 * area's entity, and db/reads.ts derives the typed reads' table types from it, so db/ and the
 * areas meet there. It is left out of the graph (options.exclude); lint/check-imports.ts checks
 * on its own that only db/ imports it.
 */
const AREAS = '(access|budgets|comments|github|idempotency|jobs|keys|media|milestones|moderation|oauth|outbox|platform|posts|projects|radar|reactions|search|security-log|sessions|telemetry|users|webhooks|writes)';
// A provider file is an area's answer to a library's interface over HTTP (the OAuth server's, for the MCP SDK's handlers).
const ADAPTER_FILE = '[.](routes|tools|provider)[.]ts$';
const ADAPTER_FOLDERS = '^src/(http|mcp|web|cli)/';
const ENTITY_REGISTRY = '^src/db/entities[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'kernel-imports-nothing-of-ours',
      comment: 'The kernel is what every layer shares: it imports no area, no adapter, no database and no framework.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: { path: '^src/', pathNot: '^src/kernel/' },
    },
    {
      name: 'kernel-uses-no-framework',
      comment: 'The kernel runs anywhere: Node built-ins only, and of the generated code only the contract types.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'local'],
        pathNot: ['^src/', '^codegen/generated/api/types[.]gen[.]ts$'],
      },
    },
    {
      name: 'db-below-the-areas',
      comment: 'db/ is under the areas: it imports the kernel and itself (and the entity registry, left out of the graph).',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db|kernel)/' },
    },
    {
      name: 'core-never-imports-an-adapter',
      comment: "An area's entity, queries, service and presenter never import http/, mcp/, web/, cli/ or a routes or tools file: adapters call areas, not the other way round.",
      severity: 'error',
      from: { path: `^src/${AREAS}/`, pathNot: ADAPTER_FILE },
      to: { path: [ADAPTER_FOLDERS, ADAPTER_FILE, '^src/[^/]+[.]ts$'] },
    },
    {
      name: 'core-never-imports-express',
      comment: "The areas' core does not know about HTTP: express belongs to the adapters.",
      severity: 'error',
      from: { path: [`^src/${AREAS}/`, '^src/(db|kernel)/'], pathNot: ADAPTER_FILE },
      to: { path: 'node_modules/(express|express-openapi-validator|@modelcontextprotocol)/' },
    },
    {
      name: 'kits-import-no-area',
      comment:
        "http/kit/ and mcp/kit/ are what an area's routes and tools files are written with: they import the kernel and packages only, so that an adapter folder that calls the areas is never imported back by them.",
      severity: 'error',
      from: { path: '^src/(http|mcp)/kit/' },
      to: { path: '^src/', pathNot: ['^src/kernel/', '^src/(http|mcp)/kit/'] },
    },
    {
      name: 'routes-and-tools-use-the-kits',
      comment:
        "An area's routes and tools files take from http/ and mcp/ only their kits: the pipeline and the endpoint call the areas, so importing them back would be a folder cycle.",
      severity: 'error',
      from: { path: `^src/${AREAS}/.*${ADAPTER_FILE}` },
      to: { path: '^src/(http|mcp)/', pathNot: '^src/(http|mcp)/kit/' },
    },
    {
      name: 'adapters-send-what-services-answer',
      comment:
        "A service answers in the contract's shapes, presented once (docs/architecture.md): a routes or tools file sends what it got, and never presents a record itself.",
      severity: 'error',
      from: { path: `^src/${AREAS}/.*${ADAPTER_FILE}` },
      to: { path: '[.]presenter[.]ts$' },
    },
    {
      name: 'mcp-uses-the-http-kit-only',
      comment:
        'The MCP endpoint is an adapter beside the REST pipeline, not inside it: of http/ it takes only the kit (bearer tokens, the JSON body, chains, the budget hooks), so that a change to the pipeline cannot reach it unseen.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/http/', pathNot: '^src/http/kit/' },
    },
    {
      name: 'no-module-cycles',
      comment: 'No file imports itself through others.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'No folder imports itself through others (the entity registry, the one exception, is left out of the graph).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    // Packages and generated code are seen (so the rules about them can fail) but not cruised into.
    doNotFollow: { path: ['node_modules', '^codegen/generated'] },
    exclude: { path: ENTITY_REGISTRY },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
