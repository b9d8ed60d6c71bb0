/**
 * Clients that integrators generate from the served contract with the usual generators
 * (openapi-typescript, Orval, and hey-api, which makes this project's own SDK) keep its open enums
 * open and its free-form objects free: an answer carrying a problem type, a scope or a webhook
 * event type this contract does not list type-checks, and so do MCP params. A probe file is
 * type-checked against each generator's output, beside one that must fail (a number where a
 * string goes), so the check is seen to bite.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const contract = join(root, 'codegen/generated/openapi.json');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
let dir = '';

function run(command: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync(command, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** What each generator calls the types a probe uses. */
const generators = {
  'openapi-typescript': {
    imports: "import type { components } from './openapi-typescript/schema';",
    type: (name: string) => `components['schemas']['${name}']`,
  },
  orval: {
    imports: "import type { Problem, WebhookDelivery, WebhookSubscription, JsonRpcMessage } from './orval/client';",
    type: (name: string) => name,
  },
  'hey-api': {
    imports: `import type { Problem, WebhookDelivery, WebhookSubscription, JsonRpcMessage } from '${join(root, 'codegen/generated/api/types.gen')}';`,
    type: (name: string) => name,
  },
};

/** An answer from a newer server: a problem type and code, a scope and an event type this contract does not list. */
const probe = (t: (name: string) => string) => `
export const problem: ${t('Problem')} = {
  type: '/problems/some-kind-added-later',
  code: 'some-reason-added-later',
  title: 'Something new',
  status: 422,
  detail: 'A refusal this client has never seen.',
  requiredScope: 'billing.read',
  grantedScopes: ['projects.read', 'billing.read'],
};
export const event: ${t('WebhookDelivery')}['eventType'] = 'invoice.paid';
export const events: ${t('WebhookSubscription')}['events'] = ['milestone.created', 'release.published'];
export const message: ${t('JsonRpcMessage')} = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_roadmap', arguments: { projectId: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' } },
};
`;
/** What no contract allows: the check has to refuse it. */
const wrong = (t: (name: string) => string) => `export const problem: ${t('Problem')}['type'] = 404;\n`;

describe('clients generated from the contract', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'shipyard-generated-'));
    const ots = run(bin('openapi-typescript'), [contract, '-o', join(dir, 'openapi-typescript/schema.d.ts')]);
    expect(ots.status, ots.output).toBe(0);
    writeFileSync(
      join(dir, 'orval.config.mjs'),
      `export default { shipyard: { input: ${JSON.stringify(contract)}, output: { target: ${JSON.stringify(join(dir, 'orval/client.ts'))}, client: 'fetch', mode: 'single' } } };\n`,
    );
    const orval = run(bin('orval'), ['--config', join(dir, 'orval.config.mjs')]);
    expect(orval.status, orval.output).toBe(0);
    for (const [name, g] of Object.entries(generators)) {
      writeFileSync(join(dir, `${name}.probe.ts`), `${g.imports}\n${probe(g.type)}`);
      writeFileSync(join(dir, `${name}.wrong.ts`), `${g.imports}\n${wrong(g.type)}`);
    }
  }, 180_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accept an unknown problem type and code, scope and event type, and MCP params, and refuse a number for a type', () => {
    const files = Object.keys(generators).flatMap((name) => [`${name}.probe.ts`, `${name}.wrong.ts`]);
    const tsc = run(bin('tsc'), [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'esnext',
      '--moduleResolution',
      'bundler',
      '--types',
      'node',
      '--typeRoots',
      join(root, 'node_modules/@types'),
      ...files,
    ]);
    const errors = tsc.output.split('\n').filter((line) => /error TS\d+/.test(line));
    // Only the wrong files fail, each on its one line.
    expect(
      errors.filter((e) => !/\.wrong\.ts/.test(e)),
      tsc.output,
    ).toEqual([]);
    for (const name of Object.keys(generators))
      expect(
        errors.filter((e) => e.startsWith(`${name}.wrong.ts`)),
        `${name}: ${tsc.output}`,
      ).toHaveLength(1);
  }, 180_000);
});
