/**
 * Each problem document a test receives, held to the contract's catalogues: its `code` is one the
 * contract declares (a type's slug, or an x-problem-codes entry), and one that refines the type it
 * came with. `raw` (./harness.ts) checks every problem+json answer the suite reads through it.
 */
import { loadContract } from '../src/kernel/contract.js';

const contract = loadContract() as unknown as {
  'x-problem-types': { slug: string }[];
  'x-problem-codes': { code: string; types: string[] }[];
};
/** The problem types (slugs) each declared code may come with. */
const TYPES_OF = new Map<string, string[]>([
  ...contract['x-problem-types'].map((t): [string, string[]] => [t.slug, [t.slug]]),
  ...contract['x-problem-codes'].map((c): [string, string[]] => [c.code, c.types]),
]);

/** What is wrong with a problem document's code, if anything. */
export function problemCodeFault(problem: { type?: unknown; code?: unknown }): string | undefined {
  const slug = typeof problem.type === 'string' ? problem.type.replace(/^\/problems\//, '') : undefined;
  if (typeof problem.code !== 'string') return `a problem of type ${String(problem.type)} has no code`;
  const types = TYPES_OF.get(problem.code);
  if (!types) return `the problem code '${problem.code}' is not declared in the contract`;
  if (!slug || !types.includes(slug)) return `the problem code '${problem.code}' does not refine the type ${slug}`;
  return undefined;
}
