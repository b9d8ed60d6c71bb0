/**
 * Answers sized for a model's context. A list answer keeps every field that has something in it
 * but shortens long text to PREVIEW characters, saying so in the text itself and how to get the
 * whole of it; `detail: "summary"` keeps only what identifies an item, `"full"` every field whole.
 *
 * The result's text block carries the same data as `structuredContent`: a headline, then the data
 * as compact JSON, one line per item of a list (clients that hand the model only `content` lose
 * nothing). Both together stay under ANSWER_CAP_BYTES: a list that would pass it returns fewer
 * items and a cursor for the rest, and a single item too long for it has its long text shortened.
 */
import * as z from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Detail } from './inputs.js';
import { plural } from '../../kernel/text.js';
import { AUTHORSHIP_META_KEY, FENCE_NOTE, fenced, newFence, type WrittenBy } from './authorship.js';

/** How much of a long text field a list answer keeps. */
export const PREVIEW = 400;

/**
 * The most a tool result weighs as sent (its text block and structuredContent, JSON-encoded):
 * about 16k tokens of English at 4 bytes a token, and under 22k for scripts that take a token a
 * character (3 bytes), below the 25k tokens that clients such as Claude Code accept.
 */
export const ANSWER_CAP_BYTES = 64_000;
/** Room kept under the cap for the headline and the cursor beside the items. */
const HEADLINE_ROOM = 1_000;

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
function sized<T extends Record<string, unknown>, K extends keyof T>(
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
    // A field with nothing in it (null, or an empty list) says nothing a model needs, and costs
    // its name on every item: left out, as a summary's fields are. `full` keeps every field.
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(item)) {
      if (keep.includes(k as K) || !(v === null || (Array.isArray(v) && v.length === 0))) copy[k] = v;
    }
    for (const field of texts) {
      const value = item[field];
      if (typeof value === 'string') copy[field as string] = shorten(value, tool);
    }
    return copy as Partial<T>;
  });
}

/** The item schema of a list answer: `keep` always present, every other field optional (absent in a summary). */
function listedItem<S extends z.ZodObject>(item: S, keep: readonly (keyof S['shape'] & string)[]) {
  const required = Object.fromEntries(keep.map((k) => [k, true])) as Record<string, true>;
  return item.partial().required(required as never);
}

/**
 * A list tool's output schema: its items (`keep` always, the rest as `detail` gives them) and,
 * while more follow, `nextCursor`, left out on the last page rather than null (one JSON type).
 */
export function listOutput<S extends z.ZodObject>(item: S, keep: readonly (keyof S['shape'] & string)[]) {
  return z.object({
    items: z.array(listedItem(item, keep)),
    nextCursor: z.string().describe('Send it as cursor for the next page. Absent on the last page.').optional(),
  });
}

/** A page of a list tool's answer: its items sized for `detail`, and its cursor when more follow. */
export function listed<T extends Record<string, unknown>, K extends keyof T>(
  page: { items: T[]; nextCursor: string | null },
  detail: Detail,
  tool: string,
  keep: readonly K[],
  texts: readonly (keyof T)[],
): { items: Partial<T>[]; nextCursor?: string } {
  const items = sized(page.items, detail, tool, keep, texts);
  return page.nextCursor ? { items, nextCursor: page.nextCursor } : { items };
}

type Item = Record<string, unknown>;
type ListData = { items: Item[]; nextCursor?: string | null };

/** How a tool's answer is written and kept under the cap. */
export type AnswerShape = {
  /**
   * The first line of the text: what was found or changed. For a list, what its items are
   * ("3 milestones (done)"), given the items the answer holds; how to go on follows it.
   */
  headline: (data: Item) => string;
  /** Lines before the headline, read first (a roadmap's status). */
  preface?: string;
  /** A sentence after the headline's first line, before the data. */
  note?: string;
  /** Fields of an item whose long text the cap may shorten (descriptions, bodies). */
  texts: readonly string[];
  /** For a list: the cursor that continues after `kept`, the first items of the page. */
  cursorAfter?: (kept: Item[]) => Promise<string>;
  /** Where the whole of an item shortened to fit can be read. */
  wholeAt?: (item: Item) => string;
  /** Whose words each item (or the one result) carries: someone else's are fenced (./authorship.ts). */
  writtenBy?: WrittenBy;
};

const isList = (data: Item): data is ListData & Item => Array.isArray(data.items);

/**
 * An item as one line of the text: its JSON, with the line breaks JSON leaves as they are (U+0085,
 * U+2028, U+2029) escaped too, since readers that split lines on them would read a line of someone
 * else's words as several, and the fence (./authorship.ts) relies on it being one.
 */
const itemLine = (item: Item): string =>
  JSON.stringify(item).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const bytes = (s: string) => Buffer.byteLength(s);
/** What the result weighs as sent. */
export const resultBytes = (result: CallToolResult) => bytes(JSON.stringify(result));
const CAP_KB = `${Math.round(ANSWER_CAP_BYTES / 1000)} KB`;

/**
 * The result of a tool that returned `data`: the text block (headline and data) and
 * structuredContent, under ANSWER_CAP_BYTES.
 */
export async function answer(data: Item, shape: AnswerShape): Promise<CallToolResult> {
  const { result: whole, atMost } = wholeAnswer(data, shape);
  if (atMost <= ANSWER_CAP_BYTES || resultBytes(whole) <= ANSWER_CAP_BYTES) return whole;
  if (isList(data) && shape.cursorAfter && data.items.length > 1) {
    const cut = await fewerItems(data, shape);
    if (cut) return cut;
  }
  return shortened(data, shape);
}

/** The result of `data` whole, before the cap, and what it weighs as sent at most (weightAtMost). */
export function wholeAnswer(data: Item, shape: AnswerShape): { result: CallToolResult; atMost: number } {
  const drawn = draw(data, shape);
  return { result: drawn.result, atMost: weightAtMost(drawn, data) };
}

/** A result as drawn: the result, its text's lines, and where in them each item's JSON line is. */
type Drawn = { result: CallToolResult; lines: string[]; itemAt: number[] };

/**
 * What the result weighs as sent (resultBytes) at most, without writing its data out again: the
 * result without its items, and each item's JSON line (already written) counted twice in the text
 * and once in structuredContent. A JSON line holds no character that JSON writes as more than two
 * (control characters, lone surrogates and line separators are escaped in it already; a quote or
 * a backslash becomes two), so escaped it weighs at most twice as much; and no item weighs more in
 * structuredContent than its line. Infinity for a single item, which is
 * weighed as it is.
 */
function weightAtMost({ result, lines, itemAt }: Drawn, data: Item): number {
  if (!isList(data)) return Number.POSITIVE_INFINITY;
  const items = new Set(itemAt);
  let weight = 0;
  // Twice escaped in the text with its "\n", once in structuredContent with its comma.
  for (const at of items) weight += 3 * bytes(lines[at]!) + 3;
  const text = lines.filter((_, at) => !items.has(at)).join('\n');
  const without: CallToolResult = {
    ...result,
    content: [{ type: 'text', text }],
    structuredContent: { ...data, items: [] },
  };
  return weight + resultBytes(without);
}

/**
 * The result: the headline, then the data as JSON (a list: one item a line), and the data as
 * structuredContent; an item someone else wrote is fenced, and `_meta` says who wrote each.
 */
function render(data: Item, shape: AnswerShape, cut?: string): CallToolResult {
  return draw(data, shape, cut).result;
}

function draw(data: Item, shape: AnswerShape, cut?: string): Drawn {
  const items = isList(data) ? data.items : [data];
  const authors = shape.writtenBy ? items.map(shape.writtenBy) : [];
  const fence = authors.some((a) => a.by !== 'you') ? newFence() : undefined;
  const fenceNote = fence ? ` ${FENCE_NOTE}` : '';
  const lines: string[] = shape.preface ? [shape.preface] : [];
  const itemAt: number[] = [];
  const addItem = (item: Item, i: number) => {
    const json = itemLine(item);
    const block = fence ? fenced(json, authors[i]!, fence) : [json];
    itemAt.push(lines.length + block.indexOf(json));
    lines.push(...block);
  };
  if (isList(data)) {
    const more = data.nextCursor
      ? ` More after these: call again with cursor "${data.nextCursor}".`
      : data.items.length
        ? ' That is all of them.'
        : '';
    const head = `${shape.headline(data)}.${cut ? ` ${cut}` : ''}${more}${shape.note ? ` ${shape.note}` : ''}`;
    lines.push(data.items.length ? `${head}${fenceNote} One JSON object a line:` : head);
    data.items.forEach(addItem);
  } else {
    lines.push(`${shape.headline(data)}${cut ? ` ${cut}` : ''}${shape.note ? ` ${shape.note}` : ''}${fenceNote}`);
    addItem(data, 0);
  }
  const result: CallToolResult = { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: data };
  if (shape.writtenBy)
    result._meta = {
      [AUTHORSHIP_META_KEY]: {
        ...(fence ? { fence } : {}),
        items: items.map((item, i) => ({ ...(typeof item.id === 'string' ? { id: item.id } : {}), ...authors[i]! })),
      },
    };
  return { result, lines, itemAt };
}

/**
 * The longest first part of the list that fits, with a cursor after its last item; undefined when
 * not even one item fits. An item costs its JSON twice: once in structuredContent, once as a line
 * of the text (JSON-encoded again, with the newline before it).
 */
async function fewerItems(data: ListData & Item, shape: AnswerShape): Promise<CallToolResult | undefined> {
  let used = resultBytes(render({ ...data, items: [] }, shape)) + HEADLINE_ROOM;
  let fit = 0;
  for (const item of data.items) {
    const json = itemLine(item);
    used += bytes(json) + bytes(JSON.stringify(json)) + 1;
    if (used > ANSWER_CAP_BYTES) break;
    fit++;
  }
  for (; fit >= 1; fit--) {
    const items = data.items.slice(0, fit);
    const nextCursor = await shape.cursorAfter!(items);
    const cut = `Cut from ${data.items.length} to keep this answer under ${CAP_KB}.`;
    const result = render({ ...data, items, nextCursor }, shape, cut);
    if (resultBytes(result) <= ANSWER_CAP_BYTES) return result;
  }
  return undefined;
}

/**
 * The answer with the long text of its (first) item shortened until it fits: a list keeps that one
 * item and a cursor after it. The marker says how long the text was and where the whole is.
 */
async function shortened(data: Item, shape: AnswerShape): Promise<CallToolResult> {
  const list = isList(data);
  const original = list ? data.items[0]! : data;
  const fields = shape.texts.filter((f) => typeof original[f] === 'string');
  const nextCursor = list && data.items.length > 1 && shape.cursorAfter ? await shape.cursorAfter([original]) : null;
  const cut = list
    ? `Cut to the first item, its long text shortened, to keep this answer under ${CAP_KB}.`
    : `Its long text is shortened here to keep this answer under ${CAP_KB}.`;
  const build = (one: Item) =>
    render(list ? { ...data, items: [one], nextCursor: nextCursor ?? data.nextCursor } : one, shape, cut);
  const where = shape.wholeAt ? `; the whole text is at ${shape.wholeAt(original)}` : '';
  /** The item with each long text cut to `share` of its length (0 to 1), and marked. */
  const keeping = (share: number): Item => {
    const item: Item = { ...original };
    for (const field of fields) {
      const whole = original[field] as string;
      item[field] =
        `${clip(whole, Math.floor(whole.length * share))}${MARK}${whole.length.toLocaleString('en')} characters in all${where}]`;
    }
    return item;
  };
  const whole = build(original);
  if (resultBytes(whole) <= ANSWER_CAP_BYTES) return whole;
  // The largest share that fits, measured in bytes as sent: characters that JSON escapes (control
  // characters, quotes) weigh several bytes each, so a share of characters is only a first guess.
  let fits = build(keeping(0));
  let [low, high] = [0, 1];
  for (let round = 0; round < 20; round++) {
    const share = (low + high) / 2;
    const tried = build(keeping(share));
    if (resultBytes(tried) <= ANSWER_CAP_BYTES) [low, fits] = [share, tried];
    else high = share;
  }
  return fits;
}

const MARK = '… [shortened to fit the answer: ';

/** "1 milestone", "3 milestones": a count and its word, for a list's headline. */
export { plural };

/**
 * For an answer to a selection by ids: the ids asked for that it does not hold, in a clause for
 * the headline ("; no match for …"). Empty while more pages follow, or when all were found.
 */
export function unmatched(
  asked: readonly string[] | undefined,
  page: { items: readonly { id?: unknown }[]; nextCursor?: string | null },
  filtered: boolean,
): string {
  if (!asked || page.nextCursor) return '';
  // An id is a UUID, which PostgreSQL matches in either case and answers in lowercase.
  const found = new Set(page.items.map((i) => String(i.id).toLowerCase()));
  const absent = [...new Set(asked.map((id) => id.toLowerCase()))].filter((id) => !found.has(id));
  if (!absent.length) return '';
  return `; no match${filtered ? ' under the other filters' : ''} for ${absent.join(', ')}`;
}
