/**
 * One-line text (src/kernel/text.ts) and the contract's `&line` pattern say the same thing,
 * and so do the zod schemas generated from it (the MCP tools' inputs).
 */
import { describe, expect, it } from 'vitest';
import { isLine, isOptionalLine, LINE_PATTERN, OPTIONAL_LINE_PATTERN, presentableLine } from '../../src/kernel/text.js';
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

describe('one-line text', () => {
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
