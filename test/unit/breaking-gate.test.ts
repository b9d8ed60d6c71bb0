/** The breaking-change gate (codegen/check-breaking.ts) on small contracts: what it lets through and what it stops. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { changes, gate, releasedIn } from '../../codegen/check-breaking.js';

const contract = (version: string, paths: object) => ({
  openapi: '3.1.0',
  info: { title: 't', version },
  servers: [{ url: '/api/v1' }],
  security: [{ bearerAuth: [] }] as Record<string, string[]>[],
  components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } as Record<string, object> },
  paths,
});
const op = (extra: object = {}) => ({
  operationId: 'getThing',
  parameters: [{ name: 'q', in: 'query', required: false, schema: { type: 'string', ...extra } }],
  responses: {
    '200': {
      description: 'ok',
      content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } },
    },
  },
});
const released = contract('1.0.0', { '/things': { get: op() } });
/** A changelog whose section for `version` is the work towards it, not yet released. */
const log = (version: string, breaking = '') =>
  `# API changes\n\n## ${version} — unreleased\n\n### Added\n- things\n\n### Breaking (accepted)\n${breaking}\n`;

describe('check-breaking', () => {
  it('passes an unchanged contract, and an added operation under a new version', () => {
    expect(gate(released, released, '')).toEqual([]);
    const grown = contract('1.1.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.1.0'))).toEqual([]);
  });

  it('stops a change without a new version or without its changelog section', () => {
    const grown = contract('1.0.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.0.0')).join('\n')).toMatch(/info.version is still 1.0.0/);
    expect(gate(released, { ...grown, info: { title: 't', version: '1.1.0' } }, log('1.0.9')).join('\n')).toMatch(
      /no section "## 1.1.0/,
    );
  });

  it('stops a breaking change the changelog does not accept, and lets it through once it does', () => {
    const removed = contract('2.0.0', {});
    expect(gate(released, removed, log('2.0.0')).join('\n')).toMatch(
      /breaking, not accepted in the changelog: remove \/paths\/~1things/,
    );
    expect(
      gate(
        released,
        removed,
        log('2.0.0', '- `remove /paths/~1things/get` — replaced by /others (announced 2026-05-01)'),
      ),
    ).toEqual([]);
    const narrowed = contract('1.1.0', { '/things': { get: op({ maxLength: 10 }) } });
    expect(gate(released, narrowed, log('1.1.0')).join('\n')).toMatch(/not accepted.*maxLength/);
    expect(gate(released, narrowed, log('1.1.0', '- `add /paths/**/maxLength` — the server never took more'))).toEqual(
      [],
    );
  });

  it('stops a contract whose version the changelog dates as released while the baseline holds another', () => {
    const dated = log('1.1.0').replace('1.1.0 — unreleased', '1.1.0 — 2026-11-24');
    const grown = contract('1.1.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, dated).join('\n')).toMatch(
      /dates 1\.1\.0 as released, but openapi\/released\/v1\.json holds 1\.0\.0/,
    );
    // Even with nothing else changed: the baseline is what every later break is judged against.
    expect(gate(released, { ...released, info: { title: 't', version: '1.1.0' } }, dated).join('\n')).toMatch(
      /holds 1\.0\.0/,
    );
    // Work towards 1.1.0 before its release, and the release itself, pass.
    expect(gate(released, grown, dated.replace('1.1.0 — 2026-11-24', '1.1.0 — unreleased'))).toEqual([]);
    expect(gate(released, grown, dated, { releasing: true })).toEqual([]);
    expect(gate(grown, grown, dated)).toEqual([]);
    expect(releasedIn('## 1.1.0 — 2026-11-24\n', '1.1.0')).toBe(true);
    expect(releasedIn('## 1.1.0 — unreleased\n', '1.1.0')).toBe(false);
    expect(releasedIn('## 1.1.0 — 2026-11-24\n', '1.1')).toBe(false);
  });

  it('stops an accepted entry that matches nothing (stale)', () => {
    const grown = contract('1.1.0', {
      '/things': { get: op() },
      '/others': { get: { ...op(), operationId: 'getOthers' } },
    });
    expect(gate(released, grown, log('1.1.0', '- `remove /paths/~1gone` — was never there')).join('\n')).toMatch(
      /matches no change of its kind/,
    );
  });
});

/** A small contract of the shape this API's is: a scope per operation, shared headers, a response enum. */
function realistic() {
  const doc = contract('1.0.0', {
    '/projects/{projectId}': {
      get: {
        operationId: 'getProject',
        'x-required-scope': 'projects.read',
        parameters: [{ name: 'projectId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Project' } } },
          },
          '400': { $ref: '#/components/responses/BadRequest' },
        },
      },
    },
  }) as ReturnType<typeof contract> & {
    components: Record<string, any>;
    paths: Record<string, any>;
    webhooks: Record<string, any>;
  };
  doc.components.schemas = {
    Project: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        tagline: { type: 'string' },
        stage: { $ref: '#/components/schemas/Stage' },
        scopes: { type: 'array', items: { $ref: '#/components/schemas/ScopeId' } },
      },
    },
    Stage: { type: 'string', enum: ['idea', 'building'] },
    ScopeId: { type: 'string', enum: ['projects.read', 'projects.write'], 'x-open-enum': true },
  };
  doc.components.headers = { XRequestId: { schema: { type: 'string' } } };
  doc.webhooks = {
    'project.updated': {
      post: {
        operationId: 'projectUpdatedEvent',
        parameters: [{ name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'project'],
                properties: { type: { type: 'string' }, project: { $ref: '#/components/schemas/Project' } },
              },
            },
          },
        },
        responses: { '200': { description: 'Received.' } },
      },
    },
  };
  doc.components.responses = {
    BadRequest: {
      description: 'bad',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
      content: { 'application/problem+json': { schema: { type: 'object' } } },
    },
  };
  return doc;
}

describe('check-breaking catches what a client notices', () => {
  const before = realistic();
  /** The gate's answer for `before` changed by `change`, under a new version with an empty changelog entry. */
  const judge = (change: (doc: ReturnType<typeof realistic>) => void, changelog = log('1.1.0')) => {
    const after = structuredClone(before);
    change(after);
    after.info.version = '1.1.0';
    return gate(before, after, changelog).join('\n');
  };
  const get = (doc: ReturnType<typeof realistic>) => doc.paths['/projects/{projectId}'].get;

  it.each([
    [
      'a field changes type',
      (d) => (d.components.schemas.Project.properties.tagline = { type: 'integer' }),
      /tagline\/type/,
    ],
    ['an operationId is renamed (the SDK method with it)', (d) => (get(d).operationId = 'fetchProject'), /operationId/],
    ['an operation needs another scope', (d) => (get(d)['x-required-scope'] = 'projects.write'), /x-required-scope/],
    [
      'the security scheme changes',
      (d) => {
        d.components.securitySchemes = { apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } };
        d.security = [{ apiKey: [] }];
      },
      /securitySchemes|\/security\//,
    ],
    ['the base path moves', (d) => (d.servers = [{ url: '/api/v2' }]), /\/servers\/0\/url/],
    [
      'a response header goes',
      (d) => delete d.components.responses.BadRequest.headers['X-Request-Id'],
      /remove .*\/responses\/400\/headers\/X-Request-Id/,
    ],
    ['a closed response enum grows', (d) => d.components.schemas.Stage.enum.push('launched'), /stage\/enum/],
    [
      'an optional response field goes',
      (d) => delete d.components.schemas.Project.properties.tagline,
      /remove .*\/responses\/200\/.*\/properties\/tagline/,
    ],
    ['a webhook event goes', (d) => delete d.webhooks['project.updated'], /remove \/webhooks\/project\.updated/],
    [
      "a field of a webhook's payload goes",
      (d) => delete d.components.schemas.Project.properties.id,
      /remove \/webhooks\/project\.updated\/post\/payload\/properties\/project\/properties\/id/,
    ],
    [
      "a field of a webhook's payload changes type",
      (d) => (d.components.schemas.Project.properties.tagline = { type: 'integer' }),
      /replace \/webhooks\/project\.updated\/post\/payload\/properties\/project\/properties\/tagline\/type/,
    ],
    [
      "a webhook's signed header goes",
      (d) => (d.webhooks['project.updated'].post.parameters = []),
      /remove \/webhooks\/project\.updated\/post\/headers\/webhook-id/,
    ],
    [
      "a webhook payload's closed enum grows",
      (d) => d.components.schemas.Stage.enum.push('launched'),
      /\/webhooks\/project\.updated\/post\/payload\/.*stage\/enum/,
    ],
  ] as [string, (d: ReturnType<typeof realistic>) => void, RegExp][])('stops a break: %s', (_, change, where) => {
    const problems = judge(change);
    expect(problems).toMatch(/breaking, not accepted in the changelog/);
    expect(problems).toMatch(where);
  });

  it('stops a deprecation without its changelog entry, and takes it with one', () => {
    const deprecate = (d: ReturnType<typeof realistic>) => (get(d).deprecated = true);
    expect(judge(deprecate)).toMatch(
      /deprecated, with no entry in the changelog: add "- `deprecate \/paths\/~1projects~1\{projectId\}\/get`/,
    );
    const entry = `${log('1.1.0')}\n### Deprecated\n- \`deprecate /paths/~1projects~1{projectId}/get\` — use listProjects\n`;
    expect(judge(deprecate, entry)).toBe('');
  });

  it('lets through what no client notices', () => {
    expect(judge((d) => d.components.schemas.ScopeId.enum.push('billing.read'))).toBe('');
    expect(judge((d) => (d.components.schemas.Project.properties.name = { type: 'string' }))).toBe('');
    expect(judge((d) => (get(d).description = 'One project.'))).toBe('');
    expect(judge((d) => d.servers.push({ url: 'https://eu.example.com/api/v1' }))).toBe('');
    expect(judge((d) => (d.components.schemas.Project.properties.id.description = 'The id.'))).toBe('');
    // OpenAPI 3.1 lets a reference carry its own description: still the schema it refers to.
    expect(judge((d) => (d.components.schemas.Project.properties.stage.description = 'Where it is.'))).toBe('');
    expect(judge((d) => (d.components.schemas.Project.properties.tagline.example = 'A computer'))).toBe('');
    expect(judge((d) => (get(d).externalDocs = { url: 'https://example.com/guide#projects' }))).toBe('');
    // A receiver ignores what it does not know: a new event, a new field in a payload.
    expect(
      judge((d) => (d.webhooks['project.deleted'] = structuredClone(d.webhooks['project.updated']))).replace(
        /.*operationId.*\n?/,
        '',
      ),
    ).toBe('');
    expect(judge((d) => (d.components.schemas.Project.properties.homepage = { type: 'string' }))).toBe('');
  });

  it('still sees a rule about a field called `example` change', () => {
    const project = before.components.schemas.Project;
    project.properties.example = { type: 'string' };
    project.dependentRequired = { example: ['tagline'] };
    try {
      const after = structuredClone(before);
      after.components.schemas.Project.dependentRequired = { example: ['id'] };
      expect(changes(before, after).map((c) => c.pointer)).toContainEqual(
        expect.stringMatching(/dependentRequired\/example\/0$/),
      );
    } finally {
      delete project.properties.example;
      delete project.dependentRequired;
    }
  });

  it('still sees a field called `description` go', () => {
    const project = before.components.schemas.Project;
    project.properties.description = { type: 'string' };
    project.required = ['description'];
    try {
      expect(judge((d) => delete d.components.schemas.Project.properties.description)).toMatch(
        /breaking, not accepted in the changelog: remove .*\/properties\/description/,
      );
    } finally {
      delete project.properties.description;
      delete project.required;
    }
  });

  it('takes a break once the changelog accepts it', () => {
    const rename = (d: ReturnType<typeof realistic>) => (get(d).operationId = 'fetchProject');
    const accepted = log('1.1.0', '- `replace /paths/~1projects~1{projectId}/get/operationId` — announced 2026-05-01');
    expect(judge(rename, accepted)).toBe('');
  });
});

describe('check-breaking on this API contract', () => {
  const served = JSON.parse(readFileSync('codegen/generated/openapi.json', 'utf8'));
  const judge = (change: (doc: any) => void) => {
    const after = structuredClone(served);
    change(after);
    after.info.version = '99.0.0';
    return gate(served, after, log('99.0.0')).join('\n');
  };
  const getProject = (d: any) => d.paths['/projects/{projectId}'].get;

  it.each([
    [
      'Project.tagline becomes an integer',
      (d: any) => (d.components.schemas.Project.properties.tagline = { type: 'integer' }),
    ],
    ['getProject is renamed', (d: any) => (getProject(d).operationId = 'fetchProject')],
    ["getProject's scope changes", (d: any) => (getProject(d)['x-required-scope'] = 'projects.write')],
    [
      'the global security scheme changes',
      (d: any) => {
        d.components.securitySchemes = { apiKey: { type: 'apiKey', in: 'header', name: 'X-Key' } };
        d.security = [{ apiKey: [] }];
      },
    ],
    ['the servers move to /api/v2', (d: any) => (d.servers = [{ url: '/api/v2' }])],
    [
      'X-Request-Id leaves every 400',
      (d: any) => {
        for (const item of Object.values<any>(d.paths))
          for (const op of Object.values<any>(item)) delete op?.responses?.['400']?.headers?.['X-Request-Id'];
        delete d.components.responses.BadRequest.headers['X-Request-Id'];
      },
    ],
    ['a milestone status nobody knows', (d: any) => d.components.schemas.MilestoneStatus.enum.push('blocked')],
    ["Problem's optional `instance` goes", (d: any) => delete d.components.schemas.Problem.properties.instance],
    ['a problem type is renamed', (d: any) => (d.components.schemas.KnownProblemType.enum[0] += '-renamed')],
    ['OAuth leaves the top-level security', (d: any) => (d.security = d.security.filter((s: any) => !s.oauth2))],
    ['the milestone.deleted event goes', (d: any) => delete d.webhooks['milestone.deleted']],
    [
      "a field of the milestone events' payload goes",
      (d: any) => delete d.components.schemas.MilestoneEvent.allOf[1].properties.data.allOf[1].properties.shifted,
    ],
    [
      "a field of the milestone events' payload changes type",
      (d: any) =>
        (d.components.schemas.MilestoneEvent.allOf[1].properties.data.allOf[1].properties.shifted = {
          type: 'string',
        }),
    ],
  ])('stops it: %s', (_, change) => {
    expect(judge(change)).toMatch(/breaking, not accepted in the changelog/);
  });

  it.each([
    ['KnownWebhookEventType', (e: string[]) => e.pop()],
    ['KnownWebhookEventType', (e: string[]) => (e[0] = 'milestone.made')],
    ['KnownScopeId', (e: string[]) => e.pop()],
    ['KnownProblemType', (e: string[]) => e.splice(e.indexOf('/problems/busy'), 1)],
  ])('stops a value of an open enum removed or renamed: %s', (known, change) => {
    expect(judge((d) => change(d.components.schemas[known].enum))).toMatch(/breaking, not accepted in the changelog/);
  });

  it('stops an unannounced deprecation of a webhook event, and a signed header made optional', () => {
    expect(judge((d) => (d.webhooks['milestone.created'].post.deprecated = true))).toMatch(
      /deprecated, with no entry in the changelog: add "- `deprecate \/webhooks\/milestone\.created\/post`/,
    );
    expect(
      judge((d) => {
        for (const hook of Object.values<any>(d.webhooks))
          hook.post.parameters = hook.post.parameters.map((p: any) =>
            p.name === 'webhook-id' ? { ...p, required: false } : p,
          );
      }),
    ).toMatch(/breaking, not accepted in the changelog: .* \/webhooks\/[^ ]+\/post\/headers\/webhook-id\/required/);
  });

  it("accepts the problem types' new URIs under 1.3.0's entry and nothing else it could match", () => {
    const entry = '- `replace /paths/**/application~1problem+json/schema/properties/type/enum/*` — new URIs';
    const renamed = (d: any) => {
      const e = d.components.schemas.KnownProblemType.enum as string[];
      for (const [i, v] of e.entries()) e[i] = v.replace('/problems/', '/problem/');
    };
    const withEntry = (change: (d: any) => void) => {
      const after = structuredClone(served);
      change(after);
      after.info.version = '99.0.0';
      return gate(served, after, log('99.0.0', entry)).join('\n');
    };
    expect(withEntry(renamed)).toBe('');
    // Another `type` enum (a radar item's) is not covered by it.
    expect(withEntry((d) => (d.components.schemas.RadarItem.properties.type.enum[0] = 'jobs'))).toMatch(
      /breaking, not accepted in the changelog: replace .*RadarItem|breaking, not accepted in the changelog: replace \/paths\/~1radar/,
    );
  });

  it('stops an unannounced deprecation, and takes a new scope', () => {
    expect(judge((d) => (getProject(d).deprecated = true))).toMatch(/deprecated, with no entry/);
    expect(judge((d) => d.components.schemas.KnownScopeId.enum.push('billing.read'))).toBe('');
  });

  it('takes a field every answer now carries, and stops one every request must now send', () => {
    // 1.3.0's `code`: a new required field of every problem answer.
    const problem = (d: any) => d.components.schemas.Problem;
    expect(
      judge((d) => {
        problem(d).properties.hint = { type: 'string' };
        problem(d).required.push('hint');
      }),
    ).toBe('');
    expect(judge((d) => problem(d).required.push('instance'))).toBe('');
    expect(judge((d) => d.components.schemas.MilestoneCreate.required.push('dueDate'))).toMatch(
      /breaking, not accepted in the changelog: add .*requestBody.*required/,
    );
  });
});
