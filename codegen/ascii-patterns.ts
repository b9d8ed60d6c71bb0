/**
 * The bundled contract with every non-ASCII character of its `pattern`s written as a `\uXXXX`
 * escape, on standard output: the same regular expressions (ECMA-262), for a tool that cannot
 * carry the characters themselves. Prism puts a failed pattern into a response header and exits
 * on one that holds such characters (stoplightio/prism#1934):
 *
 *   npx tsx codegen/ascii-patterns.ts > /tmp/openapi-ascii.json
 *   npx @stoplight/prism-cli proxy /tmp/openapi-ascii.json http://localhost:3000/api/v1
 *
 * The contract itself keeps the characters: with them, a pattern means the same in every
 * language's regular expressions, with or without the `u` flag (src/kernel/text.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePath } from './bundle.js';

const escaped = (pattern: string) =>
  pattern.replace(/[^\x20-\x7e]/gu, (c) =>
    [...c].map((unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(''),
  );

/** `doc` with its patterns in ASCII. */
export const asciiPatterns = (doc: unknown): unknown => walk(doc);

const walk = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(walk);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === 'pattern' && typeof v === 'string' ? escaped(v) : walk(v)]),
  );
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.stdout.write(`${JSON.stringify(asciiPatterns(JSON.parse(readFileSync(bundlePath, 'utf8'))), null, 2)}\n`);
