/**
 * JSON request bodies, read strictly (RFC 8259 as an interchange format): UTF-8 only (a body
 * declared in another charset is a 415), every byte valid UTF-8, no lone surrogate written as
 * an escape, and no object with the same key twice. Each of these is a 400 problem: a parser
 * that keeps the last of two keys, or replaces a bad byte, lets a client send one thing and
 * have another stored (`{"visibility":"private","visibility":"public"}`).
 */
import express, { type Request, type RequestHandler } from 'express';
import { ProblemError } from '../../kernel/problem.js';
import { REQUEST_BODY_BYTES } from '../../kernel/limits.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

const malformedJson = (detail: string) => new ProblemError(400, 'malformed-json', 'Malformed JSON', detail);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The charset a Content-Type names, lower-cased; undefined when it names none. */
function charsetOf(req: Request): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.headers['content-type'] ?? '');
  return match?.[1]?.toLowerCase();
}

type Frame = { keys?: Set<string>; key?: string; index: number };
const segment = (f: Frame) => (f.keys ? (f.key ?? '') : String(f.index)).replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (frames: Frame[]) => frames.map((f) => `/${segment(f)}`).join('') || '/';

/**
 * The first key written twice in one object, or a lone surrogate in a string, said with a JSON
 * Pointer to where it is; undefined when there is neither. `text` is already known to be JSON.
 */
export function findDuplicateOrLoneSurrogate(text: string): string | undefined {
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i++;
      let escaped = false;
      for (let d = text.charCodeAt(i); d !== 0x22; d = text.charCodeAt(i)) {
        if (d === 0x5c /* \ */) {
          escaped = true;
          i++;
        }
        i++;
      }
      const raw = text.slice(start, ++i);
      const value = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      const frame = stack.at(-1);
      // A string is a key when it comes first in an object or after a comma in one.
      const isKey = frame?.keys !== undefined && frame.key === undefined;
      if (escaped && !value.isWellFormed()) {
        return `a lone surrogate (an unpaired \\ud800-\\udfff escape) in a ${isKey ? 'key' : 'string'} at ${pointer(stack)}`;
      }
      if (isKey) {
        if (frame.keys!.has(value))
          return `the key "${value}" appears twice in the object at ${pointer(stack.slice(0, -1))}`;
        frame.keys!.add(value);
        frame.key = value;
      }
      continue;
    }
    if (c === 0x7b /* { */) stack.push({ keys: new Set(), index: 0 });
    else if (c === 0x5b /* [ */) stack.push({ index: 0 });
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) stack.pop();
    else if (c === 0x2c /* , */) {
      const frame = stack.at(-1)!;
      if (frame.keys) frame.key = undefined;
      else frame.index++;
    }
    i++;
  }
  return undefined;
}

/** Deeper than any request of this API: a body nested further is refused before it is parsed. */
const MAX_JSON_DEPTH = 32;

/** How deep the arrays and objects of a JSON text nest (strings skipped), stopping past `max`. */
function nesting(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > max) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** Line and column (from 1) of the character at `offset` in `text`. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * The offset of the first character at which `text` stops being JSON (`text.length` when it ends
 * too soon), found by a scan of its grammar: V8's message gives no position for the commonest
 * typos (`Unexpected token '}', … is not valid JSON`). Only called on a text JSON.parse refused.
 */
function firstJsonError(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail();
          }
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x') || i >= text.length) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m?.[0] || m[0] === '-') fail();
    i += m![0].length;
  };
  // An object's or an array's items, from its opening character to `close`, comma-separated.
  const items = (close: string, item: () => void) => {
    i++;
    ws();
    if (text[i] === close) return void i++;
    for (;;) {
      item();
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === close) return void i++;
      else fail();
    }
  };
  const member = () => {
    ws();
    if (text[i] !== '"') fail();
    string();
    ws();
    if (text[i] !== ':') fail();
    i++;
    value();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') return items('}', member);
    if (c === '[') return items(']', value);
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
  } catch (at) {
    return Math.min(at as number, text.length);
  }
  return text.length;
}

/**
 * Where a JSON text stops being JSON, in a person's words: what the parser expected (its own
 * phrase when it names no part of the text, which is the client's and may be long) and the line
 * and column of that place.
 */
function whereJsonBreaks(text: string, parserMessage: string): string {
  // V8's phrase and place, when it gives them without quoting the text.
  const said = /^([A-Z][^"]*?)(?: in| after) JSON at position (\d+)/.exec(parserMessage);
  const offset = said ? Number(said[2]) : firstJsonError(text);
  const phrase = said?.[1];
  if (!phrase && offset >= text.length)
    return `it ends before the JSON does, at ${lineAndColumn(text, text.length)} (an unclosed string, object or array?)`;
  const what = phrase ? `${phrase.charAt(0).toLowerCase()}${phrase.slice(1)}` : 'unexpected character';
  return `${what} at ${lineAndColumn(text, offset)} (character ${offset + 1})`;
}

function parseStrict(req: Request, _res: unknown, next: (err?: unknown) => void): void {
  if (!Buffer.isBuffer(req.body)) return next();
  const bytes = req.body;
  if (bytes.length === 0) {
    req.body = undefined;
    // An empty body is not JSON: an operation that needs one says so (one that takes none ignores it).
    if ((req.openapi?.schema.requestBody as { required?: boolean } | undefined)?.required) {
      return next(malformedJson('The request body is empty; this operation takes a JSON body.'));
    }
    return next();
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return next(malformedJson('The request body is not valid UTF-8.'));
  }
  if (nesting(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    return next(malformedJson(`The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return next(malformedJson(`The request body is not valid JSON: ${whereJsonBreaks(text, (err as Error).message)}.`));
  }
  const problem = findDuplicateOrLoneSurrogate(text);
  if (problem) return next(malformedJson(`The request body is not acceptable JSON: ${problem}.`));
  req.body = value;
  next();
}

function utf8Only(req: Request, _res: unknown, next: (err?: unknown) => void): void {
  const charset = charsetOf(req);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && req.is(JSON_TYPES)) {
    return next(
      new ProblemError(
        415,
        'unsupported-media-type',
        'Unsupported media type',
        `JSON is read as UTF-8 only; this body declares charset=${charset}.`,
      ),
    );
  }
  next();
}

/**
 * A body sent to an operation of the contract that declares none (`POST /jobs/{jobId}/close`,
 * a DELETE) is refused: the contract says the operation takes no body, and a client that sends
 * one expects it to mean something. An empty body is no body: `Content-Length: 0`, or a chunked
 * request whose stream ends without a byte (some clients and proxies send those).
 */
function noBodyUnlessDeclared(req: Request, _res: unknown, next: (err?: unknown) => void): void {
  const operation = req.openapi?.schema;
  if (!operation || operation.requestBody) return next();
  const refused = () =>
    new ProblemError(
      400,
      'validation',
      'Invalid request',
      `${req.method} ${req.openapi!.openApiRoute.replace(/^\/api\/v1/, '')} takes no request body; send it without one.`,
      { errors: [{ path: '/body', message: 'must be absent' }] },
    );
  const length = req.headers['content-length'];
  if (length !== undefined) return next(Number(length) > 0 ? refused() : undefined);
  if (req.headers['transfer-encoding'] === undefined) return next();
  // Chunked: refused at its first byte (never read to the end), passed on when it ends without one.
  const onData = () => {
    req.off('end', onEnd);
    req.pause();
    next(refused());
  };
  const onEnd = () => {
    req.off('data', onData);
    next();
  };
  req.once('data', onData);
  req.once('end', onEnd);
}

/**
 * The body's bytes read by `raw`, for a request that has a body at all: one with neither a length
 * nor chunks (a GET, mostly) has none to read, and is passed on as the parser itself would.
 */
const bytesOfBody =
  (raw: RequestHandler): RequestHandler =>
  (req, res, next) =>
    req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined
      ? next()
      : raw(req, res, next);

/**
 * The stages that turn a JSON body into `req.body` (other bodies are left to their own parsers).
 * They run after authentication and the request budget: an unauthenticated body is never read,
 * and a malformed one costs its sender a unit like any request.
 */
export function jsonBody(): RequestHandler[] {
  return [
    noBodyUnlessDeclared as RequestHandler,
    utf8Only as RequestHandler,
    // Bytes first (decompressed, at most 1 MiB), so that the decoding is ours, not a lenient one.
    bytesOfBody(express.raw({ type: JSON_TYPES, limit: REQUEST_BODY_BYTES })),
    parseStrict as RequestHandler,
  ];
}
