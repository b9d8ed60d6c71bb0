/**
 * One-line text (src/kernel/text.ts) and the contract's `&line` pattern say the same thing,
 * and so do the zod schemas generated from it (the MCP tools' inputs).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  editDistance,
  isLine,
  meant,
  isOptionalLine,
  LINE_PATTERN,
  linePaths,
  notLinesAt,
  OPTIONAL_LINE_PATTERN,
  presentableLine,
} from '../../src/kernel/text.js';
import { loadContract } from '../../src/kernel/contract.js';
import { asciiPatterns } from '../../codegen/ascii-patterns.js';
import { zCompanyName, zMilestoneTitle, zProjectName } from '../../codegen/generated/api/zod.gen.js';

const contract = loadContract() as any;
const schemas = contract.components.schemas;

const LINES = [
  'a',
  'Analytical Engine',
  '  padded  ',
  'Ada\u00a0Lovelace',
  '東京\u3000タワー',
  '👨‍👩‍👧',
  'soft\u00adhyphen',
  'ملف\u200fنص',
];
const NOT_LINES = [
  '',
  ' ',
  '\t',
  '\u3000',
  '\u00a0',
  '\u200b',
  '\u200d',
  '\ufeff',
  ' \u2060 ',
  'a\tb',
  'a\nb',
  'a\u2028b',
  'ok\u202etxt',
  '\u2066x\u2069',
  'bell\u0007',
  'c1\u0085',
];

/** Lines in the eyes of the pattern (it cannot name a character beyond the basic plane), not of Unicode's properties. */
const INVISIBLE_BEYOND_THE_LIST = [
  '\u{E0020}',
  '\u{E0100}',
  '\u{1D173}\u{1D17A}',
  '\u{13430}',
  '\u{1BCA0}',
  '\u{E0FFF}',
  '\u{3FFFD}',
  ' \u{E0001} ',
];
const VISIBLE_BEYOND_THE_PLANE = ['\u{1D518}', '🚀', '\u{E0020}x', '\u{20000}', '\u{F0000}'];

/** Visible by Unicode's properties, written out independently of the module: one code point at a time. */
const shows = (cp: number) => {
  const c = String.fromCodePoint(cp);
  return !/\p{Default_Ignorable_Code_Point}|\p{Cf}|\p{Z}|\p{Cc}|\p{Cs}|\p{Cn}/u.test(c) && cp !== 0x2800;
};
const forbids = (cp: number) =>
  cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x2027 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);

describe('one-line text', () => {
  it('decides what is visible from Unicode properties across the whole code space (fast-check)', () => {
    for (const v of INVISIBLE_BEYOND_THE_LIST) expect(isLine(v), JSON.stringify(v)).toBe(false);
    for (const v of VISIBLE_BEYOND_THE_PLANE) expect(isLine(v), JSON.stringify(v)).toBe(true);
    for (const v of ['\u2065', '\uFFF0', '\uFFF8']) expect(isLine(v), JSON.stringify(v)).toBe(false);
    const anyCodePoint = fc.oneof(
      fc.integer({ min: 0, max: 0x10ffff }),
      fc.integer({ min: 0xe0000, max: 0xe0fff }),
      fc.integer({ min: 0x1d170, max: 0x1d17f }),
      fc.constantFrom(0x20, 0x200b, 0x2800, 0xfeff, 0x13430, 0x1bca0),
    );
    fc.assert(
      fc.property(
        fc.array(
          anyCodePoint.filter((cp) => cp < 0xd800 || cp > 0xdfff),
          { maxLength: 6 },
        ),
        (cps) => {
          const v = String.fromCodePoint(...cps);
          const expected = !cps.some(forbids) && cps.some(shows);
          expect(isLine(v), cps.map((c) => c.toString(16)).join(' ')).toBe(expected);
          // The contract's pattern refuses no line: what it lets through, the server decides.
          if (expected) for (const flags of ['', 'u']) expect(new RegExp(LINE_PATTERN, flags).test(v)).toBe(true);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('finds every line a schema asks for, and the ones a value breaks', () => {
    const root = { components: { schemas: contract.components.schemas } };
    const paths = linePaths({ $ref: '#/components/schemas/ProjectCreate' }, root);
    expect(paths).toEqual(expect.arrayContaining([['name'], ['links', '*', 'label']]));
    const body = { name: 'ok', links: [{ label: 'fine' }, { label: '\u{E0020}' }], tagline: '\u{E0020}' };
    expect(notLinesAt(body, paths)).toEqual(['/links/1/label']);
    expect(notLinesAt({ name: ' \u{E0100}' }, paths)).toEqual(['/name']);
  });

  it('is the pattern the contract writes on every name and title', () => {
    for (const name of ['ProjectName', 'MilestoneTitle', 'PostTitle', 'JobTitle', 'CompanyName'])
      expect(schemas[name].pattern, name).toBe(LINE_PATTERN);
    expect(schemas.ProjectLinkInput.properties.label.pattern).toBe(LINE_PATTERN);
    expect(schemas.ProjectCreate.properties.tagline.pattern).toBe(OPTIONAL_LINE_PATTERN);
    expect(schemas.JobCreate.properties.location.pattern).toBe(OPTIONAL_LINE_PATTERN);
  });

  it('takes names people write and refuses what shows nothing or reorders the text', () => {
    for (const v of LINES) expect(isLine(v), JSON.stringify(v)).toBe(true);
    for (const v of NOT_LINES) expect(isLine(v), JSON.stringify(v)).toBe(false);
    expect(isOptionalLine('')).toBe(true);
    expect(isOptionalLine('   ')).toBe(true);
    expect(isOptionalLine('a\u202eb')).toBe(false);
  });

  it('is read the same by the generated zod schemas, with and without the u flag', () => {
    for (const schema of [zProjectName, zMilestoneTitle, zCompanyName]) {
      for (const v of LINES) expect(schema.safeParse(v).success, JSON.stringify(v)).toBe(true);
      for (const v of NOT_LINES) expect(schema.safeParse(v).success, JSON.stringify(v)).toBe(false);
    }
    const unicode = new RegExp(LINE_PATTERN, 'u');
    for (const v of [...LINES, ...NOT_LINES]) expect(unicode.test(v), JSON.stringify(v)).toBe(isLine(v));
  });

  it('is the same pattern in the ASCII copy made for tools that cannot carry the characters (Prism)', () => {
    const ascii = asciiPatterns(contract) as any;
    for (const name of ['ProjectName', 'WebhookDescription']) {
      const pattern: string = ascii.components.schemas[name].pattern;
      expect(pattern).toMatch(/^[\x20-\x7e]*$/);
      for (const flags of ['', 'u'])
        for (const v of [...LINES, ...NOT_LINES])
          expect(new RegExp(pattern, flags).test(v), `${name} ${JSON.stringify(v)}`).toBe(
            new RegExp(schemas[name].pattern, flags).test(v),
          );
    }
  });

  it('stays linear on a megabyte that almost matches', () => {
    // Counted, not timed: a backtracking pattern would not finish at all on these.
    expect(isLine(`${' '.repeat(1_000_000)}\u0001`)).toBe(false);
    expect(isLine(`${'a'.repeat(1_000_000)}\u0001`)).toBe(false);
  });

  it('makes a stored value presentable without losing what is visible', () => {
    expect(presentableLine('Engine', 'x')).toBe('Engine');
    expect(presentableLine(' Mill\u2066 ', 'x')).toBe('Mill');
    expect(presentableLine('gear\u202eraeg', 'x')).toBe('gear raeg');
    expect(presentableLine(' \u200b ', 'fallback')).toBe('fallback');
    expect(presentableLine('', 'fallback')).toBe('fallback');
  });
});

describe('the field a name likely misspells', () => {
  const fields = ['name', 'tagline', 'description', 'stage', 'visibility', 'tags'];
  it.each([
    ['nmae', 'name'],
    ['tagilne', 'tagline'],
    ['descripton', 'description'],
    ['Visibilty', 'visibility'],
    ['stag', 'stage'],
  ])('reads %s as %s', (typed, field) => expect(meant(typed, fields)).toBe(field));
  it.each(['colour', 'owner', 'id', 'x', 'tagz1'])('finds none for %s', (typed) =>
    expect(meant(typed, fields)).toBeUndefined(),
  );
  it('counts a swap of two neighbours as one edit', () => {
    expect(editDistance('nmae', 'name')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
