/**
 * Hand-written SQL in src/ (outside migrations) is only what docs/decisions/0004-typed-reads.md
 * lists: every string or template literal that begins a SQL statement is found with the
 * TypeScript parser and checked against the record's table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const RECORD = join(ROOT, 'docs', 'decisions', '0004-typed-reads.md');

/** The beginnings of a SQL statement (a word alone, like "Update a milestone", is not one). */
const STATEMENT =
  /^\s*(select\s+(\*|distinct|[\w"]+(\.[\w"]+)?\s*(,|from|as\b|::)|\d|count\(|exists|\()|insert\s+into|update\s+"?\w+"?\s+set|delete\s+from|with\s+(recursive\s+)?"?\w+"?\s+as\s*\(|create\s+(or\s+replace\s+)?(unique\s+)?(trigger|table|index|function|sequence|view|type|extension)|drop\s+(trigger|table|index|function|sequence|view|type)|alter\s+(table|sequence|index)|truncate\s|lock\s+table|listen\s|notify\s|deallocate\s|set\s+(local\s+|session\s+)?(constraints|\w+\s*(=|to)\s)|reset\s+\w|(begin|commit|rollback)\s*(;|$)|vacuum\b|analyze\b)/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each literal's text (a template's parts joined by its substitutions' places). */
function literals(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    else if (ts.isTemplateExpression(node))
      found.push(node.head.text + node.templateSpans.map((s) => `\${…}${s.literal.text}`).join(''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function handWrittenStatements(): { file: string; text: string }[] {
  return sourceFiles(join(ROOT, 'src')).flatMap((file) =>
    literals(file)
      .filter((text) => STATEMENT.test(text))
      .map((text) => ({ file: relative(ROOT, file), text: text.trim().replace(/\s+/g, ' ') })),
  );
}

/** The record's table: file and the statement's first words. */
function recorded(): { file: string; begins: string }[] {
  return [...readFileSync(RECORD, 'utf8').matchAll(/^\| (src\/\S+) \| `([^`…<]+)/gm)].map((m) => ({
    file: m[1]!,
    begins: m[2]!.trim().toLowerCase(),
  }));
}

describe('hand-written SQL', () => {
  it('finds statements, and not words that only look like one', () => {
    for (const s of ['select id from posts', 'insert into reactions (id) values ($1)', "set local lock_timeout = '2s'"])
      expect(STATEMENT.test(s), s).toBe(true);
    for (const s of ['Update a milestone', 'set null', 'Create a key with that scope', 'commit activity', 'select'])
      expect(STATEMENT.test(s), s).toBe(false);
  });

  it('is only what the decision record lists, at most 12 statements', () => {
    const found = handWrittenStatements();
    const listed = recorded();
    expect(listed.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(12);
    const unlisted = found.filter(
      (f) => !listed.some((l) => l.file === f.file && f.text.toLowerCase().startsWith(l.begins)),
    );
    expect(unlisted, 'hand-written SQL missing from docs/decisions/0004-typed-reads.md').toEqual([]);
    const stale = listed.filter(
      (l) => !found.some((f) => l.file === f.file && f.text.toLowerCase().startsWith(l.begins)),
    );
    expect(stale, 'listed in docs/decisions/0004-typed-reads.md but no longer in src/').toEqual([]);
  });
});
