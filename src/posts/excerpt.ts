/**
 * A post's excerpt: the start of its Markdown body as plain text, for a list that shows many
 * posts (`view=summary`, MCP's summary detail, feeds' summaries, the public page). The same
 * function serves them all, so the excerpt reads the same everywhere.
 */
/** About how long an excerpt is: a tweet's length, cut on a word. */
export const EXCERPT_LENGTH = 280;
/**
 * How much of a body an excerpt is taken from: the database sends only this much of each body
 * to a summary read. Markdown's syntax (links' addresses, emphasis, code fences) can take more
 * room than the text it shows, hence the margin over EXCERPT_LENGTH.
 */
export const EXCERPT_SOURCE = 600;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The few character references Markdown writers type, and numeric ones, as the characters they name. */
function unescapeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * Markdown's syntax, each kind an alternative of one pattern, in the order that matters where two
 * start at the same place (a script's block before any tag, an image before a link). One pass
 * over the text rather than a parser, because a list shows many excerpts and a full Markdown
 * lexer cost more than the rest of such a request (docs/performance.md). It reads at most
 * EXCERPT_SOURCE characters, so no pattern can be made to run long. What it misses is shown as
 * the characters typed.
 */
const SYNTAX = new RegExp(
  [
    String.raw`<script\b[^>]*>[\s\S]*?<\/script\s*>`, // a script's or a style's content is not text
    String.raw`<style\b[^>]*>[\s\S]*?<\/style\s*>`,
    String.raw`<!--[\s\S]*?-->`,
    String.raw`<(?<auto>(?:https?|mailto):[^>\s]+)>`, // an autolink is its address
    String.raw`<\/?[a-zA-Z][^>]*>`, // any other tag
    String.raw`^ {0,3}(?:\x60{3,}|~{3,})[^\n]*$`, // a code fence's lines (the code stays)
    String.raw`^ {0,3}\[[^\]\n]+\]:[^\n]*$`, // a link reference's definition
    // An image: its description; a link: its text. An address may hold a pair of parentheses
    // (`https://en.wikipedia.org/wiki/Foo_(bar)`), as CommonMark allows.
    String.raw`!\[(?<alt>[^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)`,
    String.raw`\[(?<text>[^\]\n]*)\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\]\n]*\])`,
    String.raw`^ {0,3}#{1,6}(?=\s)`, // a heading's marks
    String.raw`^ {0,3}(?:[=-]{2,} *|(?:[-*_] *){3,})$`, // a rule, a heading's underline
    String.raw`^(?=[^\n]*---)[ |:-]+$`, // a table's rule row
    String.raw`\|`, // a table's cells
    // Marks that sit inside words or before them: quotes, list items, emphasis, strike-through,
    // code; underscores only outside a word (snake_case stays).
    String.raw`(?<gone>^ {0,3}(?:> ?)+|^ *(?:[-*+]|\d{1,9}[.)])\s+|\*{1,3}|~~|\x60+|(?=_)(?<![\p{L}\p{N}])_{1,3}|_{1,3}(?![\p{L}\p{N}]))`,
    String.raw`\\(?<escaped>[\\\x60*_{}[\]()#+\-.!|>~<])`, // an escaped character is that character
  ].join('|'),
  'gmu',
);

type Found = { auto?: string; alt?: string; text?: string; gone?: string; escaped?: string };

/** The text a reader sees in `markdown`: no syntax, no raw HTML, an image by its description. */
function textOf(markdown: string): string {
  const text = markdown.replace(SYNTAX, (...match: unknown[]) => {
    const found = match[match.length - 1] as Found;
    if (found.auto !== undefined) return found.auto;
    if (found.alt !== undefined) return found.alt;
    // A link's text may hold emphasis of its own.
    if (found.text !== undefined) return textOf(found.text);
    if (found.escaped !== undefined) return found.escaped;
    return found.gone !== undefined ? '' : ' ';
  });
  return unescapeEntities(text);
}

/**
 * The excerpt of `body`: its text without Markdown, white space made single spaces, cut on a
 * word at about EXCERPT_LENGTH characters and then ending in `…`. `cut` says the body itself was
 * longer than what was passed (a read of its first EXCERPT_SOURCE characters).
 */
export function excerptOf(body: string, cut = false): string {
  const longer = cut || body.length > EXCERPT_SOURCE;
  const source = body.length > EXCERPT_SOURCE ? body.slice(0, EXCERPT_SOURCE).replace(/[\uD800-\uDBFF]$/, '') : body;
  const text = textOf(source).replace(/\s+/g, ' ').trim();
  if (text.length <= EXCERPT_LENGTH) return longer ? `${text}…` : text;
  const head = text.slice(0, EXCERPT_LENGTH).replace(/[\uD800-\uDBFF]$/, '');
  const space = head.lastIndexOf(' ');
  // A word longer than a third of the excerpt (a URL, a hash) is cut where the length ends.
  const words = space > EXCERPT_LENGTH * (2 / 3) ? head.slice(0, space) : head;
  return `${words.replace(/[\s,;:.!?-]+$/, '')}…`;
}

/** How many excerpts are kept: the newest posts, which lists and feeds show again and again. */
const KEPT = 10_000;
const kept = new Map<string, string>();

/**
 * The excerpt of one version of a post (`key`: its id and when it last changed), made once and
 * kept for the lists and feeds that show it again; the oldest kept is let go first.
 */
export function keptExcerpt(key: string, body: string, cut = false): string {
  const known = kept.get(key);
  if (known !== undefined) return known;
  const excerpt = excerptOf(body, cut);
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key, excerpt);
  return excerpt;
}
