/**
 * The README and docs/ render as GitHub renders them (GitHub-flavoured Markdown, parsed with
 * marked): every table's rows have as many cells as its header, and every relative link names a
 * file that exists. Links into code blocks are not links.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { marked, type Token, type Tokens } from 'marked';

const root = resolve(import.meta.dirname, '..');
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

function walk(tokens: Token[], visit: (t: Token) => void): void {
  for (const t of tokens) {
    visit(t);
    const nested = [(t as { tokens?: Token[] }).tokens, (t as { items?: Token[] }).items]
      .flat()
      .filter(Boolean) as Token[];
    if (nested.length) walk(nested, visit);
    if (t.type === 'table')
      for (const row of [(t as Tokens.Table).header, ...(t as Tokens.Table).rows])
        for (const cell of row) walk(cell.tokens, visit);
  }
}

describe('the documentation renders on GitHub', () => {
  for (const file of files) {
    it(`${file}: tables are whole and relative links resolve`, () => {
      const text = readFileSync(join(root, file), 'utf8');
      // A table whose divider row has more cells than its header does not render at all: read the raw rows.
      const lines = text.split('\n');
      let inCode = false;
      for (let i = 0; i < lines.length; i++) {
        if (lines[i]!.startsWith('```')) inCode = !inCode;
        if (inCode || !/^\|.*\|$/.test(lines[i]!) || !/^\|(\s*:?-+:?\s*\|)+$/.test(lines[i + 1] ?? '')) continue;
        const cells = (l: string) =>
          l
            .replace(/\\\|/g, '')
            .replace(/`[^`]*`/g, 'x')
            .split('|').length - 2;
        const width = cells(lines[i]!);
        for (let j = i + 1; j < lines.length && /^\|/.test(lines[j]!); j++)
          expect(cells(lines[j]!), `${file}:${j + 1} has another number of cells than its header (line ${i + 1})`).toBe(
            width,
          );
      }
      const links: string[] = [];
      walk(marked.lexer(text), (t) => {
        if (t.type === 'link' || t.type === 'image') links.push((t as Tokens.Link).href);
      });
      for (const href of links.filter((h) => !/^(https?:|mailto:|#)/.test(h))) {
        const target = resolve(dirname(join(root, file)), decodeURI(href.split('#')[0]!));
        expect(existsSync(target), `${file} links to ${href}, which does not exist`).toBe(true);
      }
    });
  }
});
