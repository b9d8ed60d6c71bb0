/**
 * Property-based fuzzing from the contract (fast-check): for every operation, requests built
 * from its own example and parameters, then bent — fields dropped, unknown fields added,
 * values of the wrong type or size, odd text, ids that name nothing or are not ids, odd query
 * parameters. Every answer must be below 500 and match the contract (responses are validated
 * against it in tests, so a mismatch would be a 500), and a refused request must store nothing.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { raw, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';
import { listOperations, loadContract, type Operation } from '../src/kernel/contract.js';

const contract = loadContract();
const operations = listOperations(contract).filter((o) => o.access.kind === 'scope');
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);

const { t } = useServer();

const TABLES = [
  'users',
  'api_keys',
  'projects',
  'project_members',
  'milestones',
  'posts',
  'comments',
  'reactions',
  'media',
  'jobs',
  'github_accounts',
  'github_repos',
];
async function rowCounts(): Promise<string> {
  const [row] = await t.db.orm.em
    .fork()
    .execute(`select ${TABLES.map((n) => `(select count(*) from ${n}) as "${n}"`).join(', ')}`);
  return JSON.stringify(row);
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '<script>',
    "'; drop table projects; --",
    '../../etc/passwd',
    'null',
    '𝕊'.repeat(300),
    'x'.repeat(5000),
  ),
);
const anyValue = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 3 }),
  // ids that name nothing, or something of someone else's (mediaIds, milestoneIds)
  fc.array(fc.uuid(), { minLength: 1, maxLength: 2 }),
);

function bodyArb(example: unknown): fc.Arbitrary<unknown> {
  if (example === undefined || typeof example !== 'object' || example === null || Array.isArray(example))
    return fc.oneof(fc.constant(example), anyValue);
  const keys = Object.keys(example);
  const obj = example as Record<string, unknown>;
  return fc.oneof(
    fc.constant(obj),
    keys.length
      ? fc.constantFrom(...keys).map((k) => {
          const c = { ...obj };
          delete c[k];
          return c;
        })
      : fc.constant(obj),
    fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), anyValue).map(([k, v]) => ({ ...obj, [k]: v })),
    keys.length ? fc.tuple(fc.constantFrom(...keys), anyValue).map(([k, v]) => ({ ...obj, [k]: v })) : fc.constant(obj),
    anyValue,
  );
}

const pathValue = (real: string) =>
  fc.oneof(
    fc.constant(real),
    fc.uuid(),
    fc.constantFrom('not-an-id', '%00', '..', 'me', '00000000-0000-0000-0000-000000000000'),
  );
const queryArb = fc.array(
  fc.tuple(
    fc.constantFrom('limit', 'cursor', 'q', 'type', 'owner', 'author', 'tag', 'status', 'kind', 'skill', 'bogus'),
    fc.oneof(text, fc.integer().map(String), fc.constantFrom('Infinity', '-Infinity', '1e400', '1e2', 'NaN')),
  ),
  { maxLength: 3 },
);

describe('fuzzing every operation from the contract', () => {
  for (const op of operations) {
    it(`${op.operationId}: no 5xx, nothing stored when refused`, async () => {
      const { owner, body, params } = await operationRequest(t, contract, op as Operation);
      const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const multipart = body instanceof FormData;
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(...names.map((n) => pathValue(params[n] ?? 'x'))),
          multipart ? fc.constant(undefined) : bodyArb(body),
          queryArb,
          async (values, fuzzedBody, query) => {
            let i = 0;
            const path = op.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(values[i++]!));
            const qs = query.length ? `?${new URLSearchParams(query).toString()}` : '';
            const sendBody =
              op.method === 'get' || op.method === 'delete' ? undefined : multipart ? body : (fuzzedBody ?? {});
            const before = await rowCounts();
            const res = await raw(t, op.method.toUpperCase(), path + qs, { token: owner.token, body: sendBody });
            const what = `${op.method.toUpperCase()} ${path}${qs} ${JSON.stringify(fuzzedBody)?.slice(0, 200)} -> ${res.text.slice(0, 300)}`;
            // Every refusal, a 5xx included, is a problem document, never an HTML page.
            if (res.status >= 400) expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
            expect(res.status, what).toBeLessThan(500);
            if (res.status >= 400) expect(await rowCounts()).toBe(before);
          },
        ),
        { numRuns: RUNS },
      );
    }, 120_000);
  }
});
