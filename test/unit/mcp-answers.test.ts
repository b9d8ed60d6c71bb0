/**
 * An MCP list answer stays under the cap as sent, whatever its text holds: a list is weighed by a
 * bound first (src/mcp/kit/answers.ts), and characters that JSON escapes (quotes, backslashes,
 * control characters) make an item's line weigh up to three times its JSON as sent.
 */
import { describe, expect, it } from 'vitest';
import { ANSWER_CAP_BYTES, answer, resultBytes, type AnswerShape } from '../../src/mcp/kit/answers.js';

type Item = { id: string; text: string };

const shape = (items: Item[]): AnswerShape => ({
  headline: (data) => `${(data.items as Item[]).length} items`,
  texts: ['text'],
  cursorAfter: async (kept) => `after-${kept.length}-of-${items.length}`,
  wholeAt: (item) => `/items/${item.id}`,
});

const list = (n: number, text: (i: number) => string): Item[] =>
  Array.from({ length: n }, (_, i) => ({ id: `i${i}`, text: text(i) }));

/** Kinds of text, each escaped differently in the answer's JSON. */
const TEXTS: Record<string, (i: number) => string> = {
  quotes: () => '"'.repeat(200),
  backslashes: () => '\\'.repeat(200),
  'quotes and backslashes': (i) => '\\"'.repeat(100 + (i % 7)),
  'control characters': (i) => `a\u0001\n\t${'\u001f'.repeat(60 + (i % 5))}`,
  'non-ASCII': (i) => `${'é—'.repeat(100)}${'🚢'.repeat(i % 9)}`,
  plain: (i) => 'x'.repeat(300 + i),
};

describe('an MCP list answer', () => {
  for (const [kind, text] of Object.entries(TEXTS)) {
    it(`stays under the cap, with ${kind}, across the lengths where it passes the cap`, async () => {
      let cut = 0;
      for (let n = 10; n <= 160; n += 3) {
        const items = list(n, text);
        const result = await answer({ items, nextCursor: null }, shape(items));
        expect(resultBytes(result)).toBeLessThanOrEqual(ANSWER_CAP_BYTES);
        const kept = (result.structuredContent as { items: Item[] }).items.length;
        if (kept < n) cut++;
        // What is kept is the start of the list, and a cut list says where the rest starts.
        expect((result.structuredContent as { items: Item[] }).items.map((i) => i.id)).toEqual(
          items.slice(0, kept).map((i) => i.id),
        );
        if (kept < n)
          expect((result.structuredContent as { nextCursor?: string }).nextCursor).toBe(`after-${kept}-of-${n}`);
      }
      // The sweep crosses the cap: some lengths were cut, the shortest were not.
      expect(cut).toBeGreaterThan(0);
    });
  }

  it('sends a list that fits whole, its text carrying each item as one JSON line', async () => {
    const items = list(40, TEXTS.quotes!);
    const result = await answer({ items, nextCursor: null }, shape(items));
    expect((result.structuredContent as { items: Item[] }).items).toHaveLength(40);
    const lines = (result.content[0] as { text: string }).text.split('\n');
    expect(lines.slice(1).map((l) => JSON.parse(l))).toEqual(items);
  });
});
