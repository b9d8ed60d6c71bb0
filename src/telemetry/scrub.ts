/**
 * A statement's text as a span may carry it: every literal replaced by `?`. The ORM inlines some
 * values into its SQL, an API key's hash among them (`token_hash = '…'`), and a span is read by
 * whoever runs the tracing backend.
 */
const LITERAL =
  /\b[Ee]'(?:[^'\\]|\\[\s\S]|'')*'|(?:\b[BbXxUu]&?)?'(?:[^']|'')*'|\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$|(?<![$\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/g;

export function scrubSql(text: string): string {
  return text.replace(LITERAL, '?');
}
