/**
 * A post's excerpt: the start of its Markdown body as plain text, for a list that shows many
 * posts (`view=summary`, MCP's summary detail, feeds' summaries, the public page). The same
 * function serves them all, so the excerpt reads the same everywhere.
 */
import { Lexer, type Token } from 'marked';

/** About how long an excerpt is: a tweet's length, cut on a word. */
export const EXCERPT_LENGTH = 280;
/**
 * How much of a body an excerpt is taken from: the database sends only this much of each body
 * to a summary read. Markdown's syntax (links' addresses, emphasis, code fences) can take far
 * more room than the text it shows, hence the margin over EXCERPT_LENGTH.
 */
export const EXCERPT_SOURCE = 2_000;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The few character references Markdown writers type, and numeric ones, as the characters they name. */
function unescapeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/** Blocks: each is set apart from the next by a space, as a page sets it on its own line. */
const BLOCKS = new Set(['paragraph', 'heading', 'blockquote', 'list', 'code', 'hr', 'table', 'space', 'br']);

/** The text a reader sees in these tokens: no syntax, no raw HTML, an image by its description. */
function textOf(tokens: readonly Token[]): string {
  let out = '';
  for (const token of tokens) {
    switch (token.type) {
      case 'html':
      case 'def':
        break;
      case 'list':
        for (const item of token.items) out += ` ${textOf(item.tokens)}`;
        break;
      case 'table':
        for (const cell of [...token.header, ...token.rows.flat()]) out += ` ${textOf(cell.tokens)}`;
        break;
      case 'code':
      case 'codespan':
      case 'image':
        out += token.text;
        break;
      default:
        if ('tokens' in token && token.tokens?.length) out += textOf(token.tokens);
        else if ('text' in token && typeof token.text === 'string') out += token.text;
    }
    if (BLOCKS.has(token.type)) out += ' ';
  }
  return out;
}

/**
 * The excerpt of `body`: its text without Markdown, white space made single spaces, cut on a
 * word at about EXCERPT_LENGTH characters and then ending in `…`. `cut` says the body itself was
 * longer than what was passed (a read of its first EXCERPT_SOURCE characters).
 */
export function excerptOf(body: string, cut = false): string {
  const text = unescapeEntities(textOf(Lexer.lex(body)))
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= EXCERPT_LENGTH) return cut ? `${text}…` : text;
  const head = text.slice(0, EXCERPT_LENGTH).replace(/[\uD800-\uDBFF]$/, '');
  const space = head.lastIndexOf(' ');
  // A word longer than a third of the excerpt (a URL, a hash) is cut where the length ends.
  const words = space > EXCERPT_LENGTH * (2 / 3) ? head.slice(0, space) : head;
  return `${words.replace(/[\s,;:.!?-]+$/, '')}…`;
}
