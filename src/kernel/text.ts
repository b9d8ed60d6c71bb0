/**
 * One-line text that people name things with: project names, titles, companies, link labels,
 * display names, key names. The contract states the same rule as a pattern on each such field
 * (`openapi/components/schemas.yaml`, `&line`), so the REST validator, the MCP tools' schemas
 * and every generated client refuse what it can express (below); test/unit/text.test.ts keeps
 * the two in step.
 *
 * A line holds at least one visible character, and none of:
 * - C0 and C1 control characters (tab and newline among them), nor the line and paragraph
 *   separators: a name is one line;
 * - the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reverse
 *   or reorder the text that follows them on a page ("Trojan Source").
 * White space, zero-width and other invisible format characters are allowed around and between
 * visible ones (a zero-width joiner inside an emoji, a soft hyphen), never alone.
 * Body text (descriptions, posts, comments) is not a line: it keeps all of these.
 *
 * What is visible is decided from Unicode's properties over the whole code space (`isLine`): not
 * a default-ignorable code point, a format character (Cf), a space separator (Zs) or an unassigned
 * one (Cn). The contract's pattern can only list characters of the basic plane (a pattern that
 * must mean the same with and without the `u` flag cannot name a character beyond it), so it
 * refuses a subset of what the server refuses; the server then checks every field that carries
 * the pattern (`linePaths`, `notLinesAt`) against `isLine`, for REST and MCP alike, and the
 * contract's description of the field says so.
 */

/**
 * Never in a line: C0 and C1 controls, and U+2027–U+202E (the line and paragraph separators,
 * the bidi embeddings and overrides, and the hyphenation point that the range takes along),
 * and the bidi isolates U+2066–U+2069.
 */
const FORBIDDEN = '\\x00-\\x1F\\x7F-\\x9F\u2027-\u202E\u2066-\u2069';
/**
 * Allowed, but shows nothing on its own: the space separators (the space, no-break spaces,
 * typographic and ideographic spaces) and the zero-width and other invisible characters (soft
 * hyphen, joiners, marks, variation selectors, fillers, the braille blank, the byte-order mark,
 * the interlinear annotation marks). None of them is
 * in FORBIDDEN: the pattern below relies on the two sets being apart.
 */
const INVISIBLE =
  ' \u00A0\u00AD\u034F\u061C\u115F\u1160\u1680\u17B4\u17B5\u180B-\u180F\u2000-\u200F\u202F\u205F-\u2065\u206A-\u206F\u2800\u3000\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFFB';

/**
 * The contract's pattern for a line: invisible characters, then a visible one, then anything
 * allowed. The first part can only hold invisible characters, so the place of the first visible
 * one is fixed and the pattern runs in linear time on any input (no backtracking blow-up on a
 * megabyte of text).
 *
 * It holds the characters themselves, not `\uXXXX` escapes, and every escape in it is `\xXX`:
 * so it means the same with and without the `u` flag (Ajv compiles with it, Spectral and most
 * generators without), in every language's regular expressions, and survives the code
 * generator, which turns `\uXXXX` in a pattern into the character itself. The range
 * U+2027–U+202E avoids writing U+2028 and U+2029, which no JavaScript regex literal may hold.
 */
export const LINE_PATTERN = `^[${INVISIBLE}]*[^${FORBIDDEN}${INVISIBLE}][^${FORBIDDEN}]*$`;
/** The contract's pattern for optional one-line text (a tagline, a location): a line, or nothing visible. */
export const OPTIONAL_LINE_PATTERN = `^[^${FORBIDDEN}]*$`;

const optionalLine = new RegExp(OPTIONAL_LINE_PATTERN);
const forbidden = new RegExp(`[${FORBIDDEN}]`, 'g');
const hasForbidden = new RegExp(`[${FORBIDDEN}]`);
/**
 * One visible character, by Unicode's properties: not default-ignorable, not a format character,
 * not a space, control or separator, not a lone surrogate, assigned; nor the braille blank, which
 * is a symbol that shows nothing.
 */
const visible = /[^\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cs}\p{Cn}\u2800]/u;

/** Whether `value` is a line: something visible, nothing forbidden. */
export const isLine = (value: string): boolean => !hasForbidden.test(value) && visible.test(value);

/** Whether `value` may be stored as optional one-line text (empty, or nothing forbidden in it). */
export const isOptionalLine = (value: string): boolean => optionalLine.test(value);

/** What one line-rule breach is, said to the person who typed it (web forms; the API's 400 names the pattern). */
export function lineProblem(value: string): string | undefined {
  if (hasForbidden.test(value)) return 'no control, line-break or bidi-override characters';
  if (!visible.test(value)) return 'at least one visible character';
  return undefined;
}

/**
 * A stored value made presentable as a line: what the contract refuses is dropped, and a value
 * left with nothing visible becomes `fallback`. Presenters use it so that one row stored before
 * the rule (or by hand) cannot make every list that shows it fail its response check.
 */
export function presentableLine(value: string, fallback: string): string {
  if (isLine(value)) return value;
  const kept = value.replace(forbidden, ' ').trim();
  return isLine(kept) ? kept : fallback;
}

/** A path into a JSON value: property names, and `*` for every item of an array. */
export type LinePath = readonly string[];

/**
 * Where a JSON Schema asks for a line: the path to every string whose `pattern` is LINE_PATTERN,
 * through properties, array items and the branches of allOf / anyOf / oneOf; a `$ref` is looked up
 * in `root` (`#/components/schemas/…`, `#/definitions/…`, `#/$defs/…`).
 */
export function linePaths(schema: unknown, root: unknown = schema): LinePath[] {
  const found = new Map<string, LinePath>();
  const resolving = new Set<string>();
  const walk = (node: unknown, at: LinePath): void => {
    if (node === null || typeof node !== 'object') return;
    const s = node as Record<string, unknown>;
    if (typeof s.$ref === 'string' && s.$ref.startsWith('#/') && !resolving.has(s.$ref)) {
      resolving.add(s.$ref);
      const target = s.$ref
        .slice(2)
        .split('/')
        .reduce<unknown>(
          (n, k) => (n as Record<string, unknown> | undefined)?.[k.replace(/~1/g, '/').replace(/~0/g, '~')],
          root,
        );
      walk(target, at);
      resolving.delete(s.$ref);
    }
    if (s.pattern === LINE_PATTERN) found.set(JSON.stringify(at), at);
    if (s.properties && typeof s.properties === 'object')
      for (const [name, sub] of Object.entries(s.properties)) walk(sub, [...at, name]);
    if (s.items) walk(s.items, [...at, '*']);
    for (const branch of ['allOf', 'anyOf', 'oneOf'] as const)
      if (Array.isArray(s[branch])) for (const sub of s[branch]) walk(sub, at);
  };
  walk(schema, []);
  return [...found.values()];
}

/** The JSON pointers (`/a/0/b`) of the strings at `paths` in `value` that are not lines. */
export function notLinesAt(value: unknown, paths: readonly LinePath[]): string[] {
  const bad: string[] = [];
  const visit = (node: unknown, path: LinePath, pointer: string): void => {
    if (path.length === 0) {
      if (typeof node === 'string' && !isLine(node)) bad.push(pointer);
      return;
    }
    const [head, ...rest] = path as [string, ...string[]];
    if (head === '*') {
      if (Array.isArray(node)) for (const [i, item] of node.entries()) visit(item, rest, `${pointer}/${i}`);
    } else if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, head)) {
      visit((node as Record<string, unknown>)[head], rest, `${pointer}/${head}`);
    }
  };
  for (const path of paths) visit(value, path, '');
  return bad;
}

/** `text` as HTML text or an attribute's value: the five characters HTML gives meaning escaped. */
export const escapeHtml = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** "1 milestone", "3 milestones". */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How many single-character edits (insert, delete, replace, swap two neighbours) turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** The name among `names` that `typed` most likely misspells (two edits at most, fewer for short ones), if one. */
export function meant(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    // Two edits cannot bridge a greater difference in length: not measured (it costs both lengths).
    if (Math.abs(typed.length - name.length) > 2) continue;
    const distance = editDistance(typed.toLowerCase(), name.toLowerCase());
    if (distance <= Math.min(2, Math.floor(name.length / 3)) && (!best || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}
