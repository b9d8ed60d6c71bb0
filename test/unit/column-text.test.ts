/** What the security log keeps of text a client sends (src/security-log/security-log.service.ts). */
import { describe, expect, it } from 'vitest';
import { columnText } from '../../src/security-log/security-log.service.js';

describe('columnText', () => {
  it('keeps readable text, cut to the column by whole code points', () => {
    expect(columnText('curl/8.5.0', 200)).toBe('curl/8.5.0');
    expect(columnText('東京👨‍👩‍👧', 3)).toBe('東京👨');
    expect(columnText(undefined, 10)).toBeNull();
    expect(columnText('  Mozilla/5.0 (X11; Linux x86_64)  ', 7)).toBe('Mozilla');
    expect(columnText('   ', 10)).toBeNull();
    expect(columnText('café', 3)).toBe('caf');
  });

  it('turns control and format characters and lone surrogates into spaces, and drops text left empty', () => {
    expect(columnText('evil\u202ecod.exe', 40)).toBe('evil cod.exe');
    expect(columnText('a\u0000b\u200bc', 40)).toBe('a b c');
    // A lone surrogate is no character, and the JSON the entries are written as refuses it.
    expect(columnText('half \ud83d pair', 40)).toBe('half   pair');
    expect(columnText('\u200b\u0007', 40)).toBeNull();
  });
});
