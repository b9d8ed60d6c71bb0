/**
 * The house lint can fail: a copy of the contract with one defect of each kind is refused,
 * each defect named; the real contract passes. (make lint runs the same ruleset in CI.)
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadContract } from '../src/kernel/contract.js';
import { expectedScopes } from '../openapi/functions/scopeTable.js';

const run = promisify(execFile);

async function lint(doc: unknown, ruleset = 'openapi/spectral.yaml'): Promise<{ code: number; out: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'shipyard-lint-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  try {
    const { stdout } = await run('node_modules/.bin/spectral', ['lint', '--fail-severity=warn', '-r', ruleset, file]);
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe('house lint', () => {
  it('passes the real contract', async () => {
    const res = await lint(loadContract());
    expect(res.out).toMatch(/No results/);
    expect(res.code).toBe(0);
  }, 60_000);

  it('names each defect of a broken copy', async () => {
    const doc = structuredClone(loadContract()) as any;
    delete doc.paths['/projects'].get.operationId; // missing operationId
    delete doc.paths['/users/me'].get['x-required-scope']; // missing scope tag
    doc.paths['/projects/{projectId}'].patch['x-required-scope'] = 'projects.read'; // disagrees with the table
    doc.paths['/projects/{projectId}'].get['x-required-scope'] = 'projects.admin'; // unknown scope
    doc.paths['/posts'].post.responses['400'] = {
      description: 'bad',
      content: { 'application/json': { schema: { type: 'object' } } },
    }; // not problem+json
    delete doc.paths['/projects/{projectId}/milestones'].post.requestBody.content['application/json'].example; // no example
    const res = await lint(doc);
    expect(res.code).not.toBe(0);
    expect(res.out).toMatch(/operation-operationId/);
    expect(res.out).toMatch(/GET \/users\/me has no x-required-scope/);
    expect(res.out).toMatch(/x-required-scope 'projects.read' disagrees with the scope table \('projects.write'\)/);
    expect(res.out).toMatch(/unknown scope 'projects.admin'/);
    expect(res.out).toMatch(/response 400 must be application\/problem\+json only/);
    expect(res.out).toMatch(/the request body \(application\/json\) has no example/);
  }, 60_000);
});

describe('OWASP lint (make lint-owasp)', () => {
  const owasp = 'openapi/spectral-owasp.yaml';
  it('passes the real contract', async () => {
    const res = await lint(loadContract(), owasp);
    expect(res.out).toMatch(/No results/);
    expect(res.code).toBe(0);
  }, 60_000);

  it('names each defect of a broken copy, the narrowed rules included', async () => {
    const doc = structuredClone(loadContract()) as any;
    delete doc.paths['/projects'].get.responses['401'];
    delete doc.paths['/projects'].get.responses['200'].headers.RateLimit;
    doc.paths['/jobs'].get.security = [];
    doc.components.schemas.ProjectCreate.properties.name = { type: 'string' };
    delete doc.components.schemas.ProjectCreate.properties.tags.maxItems;
    const res = await lint(doc, owasp);
    expect(res.code).not.toBe(0);
    for (const rule of [
      'read-restricted',
      'define-error-responses-401',
      'rate-limit',
      'request-string-limit',
      'request-array-limit',
    ]) {
      expect(res.out).toContain(`shipyard-owasp-${rule}`);
    }
  }, 60_000);
});

describe('the scope table (README.md and openapi.yaml)', () => {
  const scopes = loadContract()['x-scopes'];
  const cases: [string, string, string[]][] = [
    ['get', '/api/v1/posts', ['content.read']],
    ['get', '/api/v1/posts/1/comments', ['content.read']],
    ['post', '/api/v1/posts', ['content.write']],
    ['post', '/api/v1/media', ['content.write']],
    ['post', '/api/v1/media/1', []],
    ['get', '/api/v1/search', ['content.read']],
    ['get', '/api/v1/search/x', []],
    ['get', '/api/v1/users/me', ['profile.read']],
    ['get', '/api/v1/projects/1/build-logs', ['projects.read']],
    ['patch', '/api/v1/projects/1/milestones/2', ['projects.write']],
    ['put', '/api/v1/projects/1', []],
    ['get', '/api/v1/projectsx', []],
    ['delete', '/api/v1/jobs/1', ['jobs.write']],
    ['get', '/api/v1/github/repos', ['github.read']],
    ['get', '/api/v1/radar', ['radar.read']],
    ['post', '/api/v1/admin/posts/1/hide', []],
  ];
  for (const [method, path, expected] of cases) {
    it(`${method.toUpperCase()} ${path} → ${expected.join(', ') || 'no scope'}`, () => {
      expect(expectedScopes(scopes, method, path)).toEqual(expected);
    });
  }
});

describe('403 examples', () => {
  it("name each operation's own scope and operationId, as the server's answer does", () => {
    const doc = loadContract() as unknown as {
      paths: Record<string, Record<string, { operationId?: string; 'x-required-scope'?: string; responses?: any }>>;
    };
    let checked = 0;
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) {
        const example = op.responses?.['403']?.content?.['application/problem+json']?.example;
        if (!example?.type.endsWith('/insufficient-scope')) continue;
        checked++;
        expect(example.requiredScope, op.operationId).toBe(op['x-required-scope']);
        expect(example.grantedScopes, op.operationId).not.toContain(op['x-required-scope']);
        expect(example.detail, op.operationId).toBe(
          `${op.operationId} needs the '${op['x-required-scope']}' scope; this key has ${example.grantedScopes.join(', ')}.`,
        );
      }
    expect(checked).toBeGreaterThan(50);
  });
});
