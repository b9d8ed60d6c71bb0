/**
 * Answers sized for a model's context. A list answer keeps every field but shortens long text to
 * PREVIEW characters, saying so in the text itself and how to get the whole of it; `detail:
 * "summary"` keeps only what identifies an item. The text block of a result is a short summary for
 * a person or a model to read, not a second copy of `structuredContent`.
 */
import type * as z from 'zod';
import type { Detail } from './inputs.js';

/** How much of a long text field a list answer keeps. */
export const PREVIEW = 400;
/** How many items the text summary names before "and N more". */
const NAMED = 10;

/** `text` cut to `max` UTF-16 units, never inside a surrogate pair. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max).replace(/[\uD800-\uDBFF]$/, '');
}

/** `text` cut to PREVIEW characters with a marker saying how long it is and how to get it whole. */
function shorten(text: string, tool: string): string {
  if (text.length <= PREVIEW) return text;
  return `${clip(text, PREVIEW)}… [shortened: ${text.length.toLocaleString('en')} characters in all; call ${tool} with detail "full" for the whole text]`;
}

/** Each item as `detail` asks: only `keep` for a summary, long `texts` shortened by default, whole when full. */
export function sized<T extends Record<string, unknown>, K extends keyof T>(
  items: readonly T[],
  detail: Detail,
  tool: string,
  keep: readonly K[],
  texts: readonly (keyof T)[],
): Partial<T>[] {
  if (detail === 'full') return [...items];
  if (detail === 'summary')
    return items.map((item) => Object.fromEntries(keep.map((k) => [k, item[k]])) as unknown as Partial<T>);
  return items.map((item) => {
    const copy: Record<string, unknown> = { ...item };
    for (const field of texts) {
      const value = item[field];
      if (typeof value === 'string') copy[field as string] = shorten(value, tool);
    }
    return copy as Partial<T>;
  });
}

/** The item schema of a list answer: `keep` always present, every other field optional (absent in a summary). */
export function listedItem<S extends z.ZodObject>(item: S, keep: readonly (keyof S['shape'] & string)[]) {
  const required = Object.fromEntries(keep.map((k) => [k, true])) as Record<string, true>;
  return item.partial().required(required as never);
}

/** "Showing 20 milestones (…). More: call again with cursor "…"." and the first items, one line each. */
export function listSummary(
  what: string,
  items: readonly unknown[],
  nextCursor: string | null,
  line: (item: never) => string,
): string {
  const shown = items.slice(0, NAMED).map((i) => `- ${line(i as never)}`);
  const rest = items.length > NAMED ? [`- … and ${items.length - NAMED} more in structuredContent`] : [];
  const more = nextCursor
    ? `More after these: call again with cursor "${nextCursor}".`
    : items.length
      ? 'That is all of them.'
      : '';
  return [`${items.length} ${what}.`, ...shown, ...rest, more].filter(Boolean).join('\n');
}
