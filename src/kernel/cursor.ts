/** Opaque cursors: base64url JSON of the keyset position. A tampered cursor is a 400. */
import { ProblemError } from './problem.js';
import { isUuid } from './ids.js';

export type Page<T> = { items: T[]; nextCursor: string | null };

export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, check: (v: unknown) => v is T): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (check(value)) return value;
  } catch {
    // fall through to the problem below
  }
  throw new ProblemError(
    400,
    'invalid-cursor',
    'Invalid cursor',
    'The cursor is not one this API returned; start again without it.',
    {
      errors: [{ path: '/query/cursor', message: 'not a cursor from this list' }],
    },
  );
}

export const isIdCursor = (v: unknown): v is { id: string } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { id?: unknown }).id === 'string' &&
  isUuid((v as { id: string }).id);

/** The keyset position of a list ordered by id. */
export const idOf = (item: { id: string }) => ({ id: item.id });
/** The cursor that continues a list ordered by id after `item`. */
export const cursorAfterId = (item: { id: string }): string => encodeCursor(idOf(item));

/** Fetch limit+1 rows, return limit and a cursor when there was more. */
export function pageOf<R, T>(
  rows: R[],
  limit: number,
  present: (r: R) => T,
  cursorOf: (r: R) => Record<string, string | number>,
): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(present), nextCursor: more ? encodeCursor(cursorOf(items[items.length - 1]!)) : null };
}
