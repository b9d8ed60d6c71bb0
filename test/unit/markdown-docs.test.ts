/**
 * The README and docs/ as GitHub renders them (marked, GitHub-flavoured): every block of table
 * rows is a table whose rows all have the header's number of cells, and every relative link
 * points to a file or directory that exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Lexer, type Token, type Tokens } from 'marked';

const files = [
  'README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** Every token, tables' cells and lists' items included. */
function walk(tokens: Token[], visit: (t: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    const nested = token as { tokens?: Token[]; items?: Token[] };
    if (nested.tokens) walk(nested.tokens, visit);
    if (nested.items) walk(nested.items, visit);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens, visit);
    }
  }
}

describe.each(files)('%s', (file) => {
  const text = readFileSync(file, 'utf8');
  const tokens = new Lexer({ gfm: true }).lex(text);

  it('renders each block of table rows as a table with rows as wide as its header', () => {
    const tables: Tokens.Table[] = [];
    const paragraphs: string[] = [];
    walk(tokens, (t) => {
      if (t.type === 'table') tables.push(t as Tokens.Table);
      if (t.type === 'paragraph' && /^\|.*\|\s*$/m.test(t.raw)) paragraphs.push(t.raw.split('\n')[0]!);
    });
    // Lines of pipes that GitHub does not read as a table (a divider row of another width) stay a paragraph.
    expect(paragraphs, 'rows that do not render as a table').toEqual([]);
    for (const table of tables) {
      const width = table.header.length;
      for (const row of table.rows) expect(row.length, table.raw.split('\n')[0]).toBe(width);
      // marked pads or cuts a row to the header's width: the source must agree.
      for (const line of table.raw.trim().split('\n')) {
        const cells = line
          .replace(/`[^`]*`/g, 'code')
          .replace(/\\\|/g, '')
          .trim()
          .replace(/^\||\|$/g, '')
          .split('|');
        expect(cells.length, line).toBe(width);
      }
    }
  });

  it('links only to files that exist', () => {
    const missing: string[] = [];
    walk(tokens, (t) => {
      if (t.type !== 'link' && t.type !== 'image') return;
      const href = (t as Tokens.Link).href;
      if (/^[a-z]+:|^#/.test(href)) return;
      const path = join(dirname(file), decodeURI(href.split('#')[0]!));
      if (!existsSync(path)) missing.push(href);
    });
    expect(missing).toEqual([]);
  });
});
