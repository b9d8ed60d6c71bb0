/**
 * Opaque cursors: base64url JSON of the keyset position and of the list it belongs to. A cursor
 * continues only the list that returned it (the same project, the same filters); from another
 * list, or tampered with, it is a 400 invalid-cursor.
 */
import { createHash } from 'node:crypto';
import { ProblemError } from './problem.js';
import { isUuid } from './ids.js';

export type Page<T> = { items: T[]; nextCursor: string | null };

/** Which list a cursor belongs to: its kind and everything that chooses its items, hashed short. */
export type CursorList = string & { readonly __cursorList: unique symbol };
export const cursorList = (kind: string, ...filters: unknown[]): CursorList =>
  createHash('sha256')
    .update(JSON.stringify([kind, ...filters.map((f) => f ?? null)]))
    .digest('base64url')
    .slice(0, 12) as CursorList;

export function encodeCursor(value: Record<string, string | number>, list: CursorList): string {
  return Buffer.from(JSON.stringify({ ...value, l: list })).toString('base64url');
}

const invalid = (detail: string, message: string) =>
  new ProblemError(400, 'invalid-cursor', 'Invalid cursor', detail, {
    errors: [{ path: '/query/cursor', message }],
  });

export function decodeCursor<T>(
  cursor: string | undefined,
  check: (v: unknown) => v is T,
  list: CursorList,
): T | undefined {
  if (cursor === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    // refused below
  }
  if (typeof value !== 'object' || value === null || !('l' in value))
    throw invalid('The cursor is not one this API returned; start again without it.', 'not a cursor from this list');
  const { l, ...position } = value as { l: unknown };
  if (l !== list)
    throw invalid(
      'This cursor belongs to another list (another project, or other filters): send it with the same arguments as the call that returned it, or start again without it.',
      'a cursor from another list',
    );
  if (!check(position))
    throw invalid('The cursor is not one this API returned; start again without it.', 'not a cursor from this list');
  return position;
}

export const isIdCursor = (v: unknown): v is { id: string } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { id?: unknown }).id === 'string' &&
  isUuid((v as { id: string }).id);

/** An offset cursor's check: a position after the first page, and no further than `max`. */
export const isOffsetUpTo =
  (max: number) =>
  (v: unknown): v is { o: number } => {
    const o = (v as { o?: unknown } | null)?.o;
    return Number.isInteger(o) && (o as number) > 0 && (o as number) <= max;
  };

/** The keyset position of a list ordered by id. */
export const idOf = (item: { id: string }) => ({ id: item.id });
/** The cursor that continues a list ordered by id after `item`. */
export const cursorAfterId = (item: { id: string }, list: CursorList): string => encodeCursor(idOf(item), list);

/** Fetch limit+1 rows, return limit and a cursor when there was more. */
export function pageOf<R, T>(
  rows: R[],
  limit: number,
  present: (r: R) => T,
  cursorOf: (r: R) => Record<string, string | number>,
  list: CursorList,
): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map(present),
    nextCursor: more ? encodeCursor(cursorOf(items[items.length - 1]!), list) : null,
  };
}
