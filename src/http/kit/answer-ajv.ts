/**
 * The validator answers are checked with, REST's (../answer-check.ts) and the MCP tools' results
 * (src/mcp/catalogue.ts): formats checked for their form only (docs/decisions/0019-answer-check.md),
 * the first mismatch reported.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** A new validator for answers. */
export function answerAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, strictNumbers: true, allErrors: false, validateFormats: true });
  addFormats.default(ajv, { mode: 'fast' });
  // OpenAPI's own formats: the contract's numbers and uploads.
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: Number.isInteger });
  for (const free of ['binary', 'byte', 'password', 'media-range', 'float', 'double']) ajv.addFormat(free, true);
  return ajv;
}

/** Each of ajv's errors as where the value is (below `under`) and what is wrong with it. */
export const mismatchText = (errors: ValidateFunction['errors'], under = ''): string =>
  (errors ?? []).map((e) => `${e.instancePath.slice(under.length) || '/'} ${e.message}`).join('; ');
