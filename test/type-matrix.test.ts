/**
 * A JSON body is never type-coerced: for every operation that takes one, each field of its
 * example is sent with a value of another JSON type (a number for a string, a string for an
 * integer, number or boolean, a string for an array, null where null is not allowed), and each
 * is a 400 problem that names the field and the type it must be. Fields that allow null take it.
 * Query and path values (text on the wire) are still converted by their schema: the other tests
 * send them as they come.
 */
import { describe, expect, it } from 'vitest';
import { raw, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';
import { listOperations, loadContract, type Operation } from '../src/kernel/contract.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
};

const contract = loadContract();
const schemas = (contract.components as { schemas: Record<string, Schema> }).schemas;
const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas[s.$ref.split('/').pop()!]!) : s);

/** The JSON types a schema admits (integer counts as number's subset). */
function typesOf(s: Schema): Set<string> {
  const r = resolve(s);
  if (r.oneOf || r.anyOf) return new Set([...(r.oneOf ?? r.anyOf)!].flatMap((x) => [...typesOf(x)]));
  if (r.const !== undefined) return new Set([r.const === null ? 'null' : typeof r.const]);
  return new Set([r.type ?? []].flat());
}

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
const CANDIDATES: unknown[] = [42, 'forty-two', true, ['x'], { x: 1 }, 4.2];

function admits(types: Set<string>, value: unknown): boolean {
  const t = jsonType(value);
  return types.has(t) || (t === 'integer' && types.has('number'));
}

const { t } = useServer();

/** The JSON types of the fields tested, over every operation. */
const seen = new Set<string>();

const withBodies = listOperations(contract).filter((o) => {
  if (o.access.kind !== 'scope') return false;
  const op = contract.paths[o.path]![o.method] as { requestBody?: { content?: Record<string, unknown> } };
  return Boolean(op.requestBody?.content?.['application/json']);
});

describe('a JSON body is never coerced', () => {
  it('covers an operation of every area that takes a body', () => {
    expect([...new Set(withBodies.map((o) => o.path.split('/')[1]))].sort()).toEqual([
      'comments',
      'jobs',
      'posts',
      'projects',
    ]);
  });

  for (const o of withBodies) {
    it(`${o.operationId}: every field refuses another JSON type, naming it`, async () => {
      const op = contract.paths[o.path]![o.method] as {
        requestBody: { content: { 'application/json': { schema: Schema } } };
      };
      const schema = resolve(op.requestBody.content['application/json'].schema);
      const { owner, path, body } = await operationRequest(t, contract, o as Operation);
      const fields = Object.entries(schema.properties ?? {});
      expect(fields.length, 'a body with named fields').toBeGreaterThan(0);
      for (const [name, field] of fields) {
        const types = typesOf(field);
        for (const type of types) seen.add(type);
        const wrong = [
          ...CANDIDATES.filter((v) => !admits(types, v)).slice(0, 2),
          ...(types.has('null') ? [] : [null]),
        ];
        for (const value of wrong) {
          const res = await raw(t, o.method.toUpperCase(), path, {
            token: owner.token,
            body: { ...(body as object), [name]: value },
          });
          const what = `${name} = ${JSON.stringify(value)} (${[...types].join('|')})`;
          expect(res.status, what).toBe(400);
          expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
          expect(res.json.errors, what).toEqual(
            expect.arrayContaining([
              expect.objectContaining({ path: expect.stringMatching(new RegExp(`^/body/${name}`)) }),
            ]),
          );
        }
      }
    }, 60_000);
  }

  it('has tried fields of every JSON type a body carries here', () => {
    expect([...seen].sort()).toEqual(['array', 'boolean', 'integer', 'null', 'string']);
  });
});
