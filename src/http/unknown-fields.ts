/**
 * The fields a refused JSON body holds that its operation does not take, at any depth, each named
 * with the field it likely misspells: the contract's validator stops at its first problem, so a
 * misspelt field beside a missing one (`nmae` for `name`, `lable` in a link) went unnamed. Only a
 * refusal is walked (a body that passes has none), and what is said is bounded whatever the body
 * holds: at most MAX_NAMED fields, each name cut to NAME_SHOWN characters, and a likely
 * misspelling looked for only among names of about the same length (a name's edit distance costs
 * its length times the field's).
 */
import { eachOperation, jsonBodySchema, type OpenApiDocument, schemaResolver } from '../kernel/contract.js';
import { meant } from '../kernel/text.js';

/** `path` as said (names escaped and cut), `at` as the validator writes the same place. */
type UnknownField = { path: string; message: string; at: string };
/** The unknown fields of a body refused for `operationId`, and how many more it holds beyond those named. */
export type UnknownFields = (operationId: string, body: unknown) => { named: UnknownField[]; more: number };

/** The most unknown fields a refusal names; the rest are counted. */
export const MAX_NAMED = 10;
/** The most of an unknown field's name a refusal repeats. */
const NAME_SHOWN = 100;
/** A name longer than this is nobody's misspelling of a field. */
const NAME_SOUGHT = 64;

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped, so `a/b` is not read as two levels. */
const token = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');
const shown = (name: string) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);

export function unknownFields(doc: OpenApiDocument): UnknownFields {
  const bodies = new Map<string, unknown>();
  for (const { op } of eachOperation(doc)) {
    const schema = jsonBodySchema(op);
    if (op.operationId && schema) bodies.set(op.operationId, schema);
  }
  const resolve = schemaResolver(doc);
  return (operationId, body) => {
    const named: UnknownField[] = [];
    let more = 0;
    // `path` as said; `raw` as the validator writes it (names as they are).
    const walk = (schema: unknown, value: unknown, path: string, raw: string): void => {
      const s = resolve(schema);
      if (!s || value === null || typeof value !== 'object') return;
      if (Array.isArray(value)) {
        if (s.items) for (const [i, item] of value.entries()) walk(s.items, item, `${path}/${i}`, `${raw}/${i}`);
        return;
      }
      // Only an object the contract closes, and says whole (a choice between shapes is left to the validator).
      const properties = s.properties as Record<string, unknown> | undefined;
      if (!properties || s.additionalProperties !== false || s.oneOf || s.anyOf || s.allOf) return;
      const fields = Object.keys(properties);
      for (const [name, inner] of Object.entries(value)) {
        if (Object.hasOwn(properties, name)) {
          walk(properties[name], inner, `${path}/${token(shown(name))}`, `${raw}/${name}`);
          continue;
        }
        if (named.length >= MAX_NAMED) {
          more++;
          continue;
        }
        const near = name.length <= NAME_SOUGHT ? meant(name, fields) : undefined;
        named.push({
          at: `${raw}/${name}`,
          path: `${path}/${token(shown(name))}`,
          message: `is not a field of ${path === '/body' ? 'this body' : 'this object'}${near ? `; did you mean '${near}'?` : ''}`,
        });
      }
    };
    walk(bodies.get(operationId), body, '/body', '/body');
    return { named, more };
  };
}
