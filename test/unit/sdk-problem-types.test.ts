/**
 * The SDK names the problem types and codes a caller can meet (its `ProblemType` and
 * `ProblemCode` unions and `err.is(…)`); this keeps those lists in step with the contract's
 * catalogues and with every problem type and code the server's code can send.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROBLEM_CODES, PROBLEM_SLUGS } from '../../codegen/sdk/src/problem-types.js';
import { loadContract } from '../../src/kernel/contract.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every slug written where a problem is made: `new ProblemError(status, 'slug'`, `PROBLEM_BASE}slug`, `['slug', 'Title']`. */
function serverSlugs(): Set<string> {
  const found = new Set<string>();
  const patterns = [
    /new ProblemError\(\s*[^,()]+,\s*'([a-z-]+)'/g,
    /PROBLEM_BASE\}([a-z-]+)/g,
    /PROBLEM_BASE\}\$\{[^}]*'([a-z-]+)'\s*:\s*'([a-z-]+)'/g,
    /\['([a-z-]+)', '[A-Z][a-z ]+'\]/g,
  ];
  for (const file of sources('src')) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) for (const slug of m.slice(1)) if (slug) found.add(slug);
    }
  }
  return found;
}

/** Every specific code the server's code gives a problem: `.because('code')`. */
function serverCodes(): Set<string> {
  const found = new Set<string>();
  for (const file of sources('src')) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\.because\(\s*'([a-z-]+)'/g)) found.add(m[1]!);
    // A code chosen at the throw: `.because(cond ? 'a' : 'b')`.
    for (const m of text.matchAll(/\.because\(\s*[^()]*?\?\s*'([a-z-]+)'\s*:\s*'([a-z-]+)'/g)) {
      found.add(m[1]!);
      found.add(m[2]!);
    }
  }
  return found;
}

const codes = (loadContract() as unknown as { 'x-problem-codes': { code: string; types: string[] }[] })[
  'x-problem-codes'
];

const catalogue = (loadContract() as unknown as { 'x-problem-types': { slug: string }[] })['x-problem-types'].map(
  (p) => p.slug,
);

describe('problem types', () => {
  it("the contract's catalogue (x-problem-types) lists every problem type the server can send", () => {
    const missing = [...serverSlugs()].filter((s) => !catalogue.includes(s));
    expect(missing).toEqual([]);
  });

  it("the SDK's list is the contract's catalogue, and KnownProblemType is its enum", () => {
    expect([...PROBLEM_SLUGS].sort()).toEqual([...catalogue].sort());
    const schema = (loadContract().components as { schemas: Record<string, { enum?: string[] }> }).schemas
      .KnownProblemType!;
    expect(schema.enum).toEqual(catalogue.map((s) => `/problems/${s}`));
  });

  it('the SDK knows every problem type the server can send', () => {
    const slugs = serverSlugs();
    expect(slugs.size).toBeGreaterThan(10);
    const missing = [...slugs].filter((s) => !(PROBLEM_SLUGS as readonly string[]).includes(s));
    expect(missing).toEqual([]);
  });

  it("the contract's codes (x-problem-codes) are the ones the server's code gives, each refining known types", () => {
    const sent = serverCodes();
    expect(sent.size).toBeGreaterThan(20);
    expect([...sent].filter((c) => !codes.some((d) => d.code === c))).toEqual([]);
    // And none is declared that nothing sends.
    expect(codes.map((d) => d.code).filter((c) => !sent.has(c))).toEqual([]);
    for (const { code, types } of codes) {
      expect(types.length, code).toBeGreaterThan(0);
      expect(
        types.filter((t) => !catalogue.includes(t)),
        code,
      ).toEqual([]);
      expect(catalogue, `${code} is a type's slug already`).not.toContain(code);
    }
  });

  it('gives each code at a throw only to a problem of a type the code refines', () => {
    const HELPERS: Record<string, string> = {
      conflict: 'conflict',
      unprocessable: 'unprocessable',
      forbidden: 'forbidden',
      notFound: 'not-found',
      badRequest: 'validation',
    };
    // Arguments with up to two levels of parentheses inside (a template's `${milestones(count)}`).
    const args = String.raw`((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)`;
    const helperThrow = new RegExp(
      String.raw`\b(${Object.keys(HELPERS).join('|')})\(${args}\)\s*\.because\(([^)]*)\)`,
      'g',
    );
    const newThrow = new RegExp(
      String.raw`new ProblemError\(\s*\d+,\s*'([a-z-]+)'${args}\)\s*\.because\(([^)]*)\)`,
      'g',
    );
    const typesOf = new Map(codes.map((c) => [c.code, c.types]));
    const wrong: string[] = [];
    let sites = 0;
    let checked = 0;
    for (const file of sources('src')) {
      const text = readFileSync(file, 'utf8');
      // Each code given where a problem is made (a replay's code, given to a variable, is the stored one's).
      sites += [...text.matchAll(/\)\s*\.because\(/g)].length;
      const found = [
        ...[...text.matchAll(helperThrow)].map((m) => [HELPERS[m[1]!]!, m[3]!] as const),
        ...[...text.matchAll(newThrow)].map((m) => [m[1]!, m[3]!] as const),
      ];
      for (const [type, because] of found) {
        checked++;
        // The code, or the codes a condition chooses between (`role === 'member' ? 'a' : 'b'`).
        const given = because.includes('?') ? because.slice(because.indexOf('?')) : because;
        for (const [, code] of given.matchAll(/'([a-z-]+)'/g))
          if (!typesOf.get(code!)?.includes(type)) wrong.push(`${file}: ${code} on a ${type}`);
      }
    }
    // Every code given where a problem is made was read here (a new way of throwing would escape the check).
    expect(checked).toBe(sites);
    expect(wrong).toEqual([]);
  });

  it("KnownProblemCode is every type's slug and every specific code; the SDK lists the same", () => {
    const schema = (loadContract().components as { schemas: Record<string, { enum?: string[] }> }).schemas
      .KnownProblemCode!;
    expect(schema.enum).toEqual([...catalogue, ...codes.map((c) => c.code)]);
    expect([...PROBLEM_CODES]).toEqual(codes.map((c) => c.code));
  });
});
