/**
 * A query string is read as form-encoded, the way clients write it: URLSearchParams (and the
 * clients built on it), Python's urlencode, HTML forms and Scalar's "try it" send a space as `+`,
 * and encodeURIComponent (the SDK's serializer) leaves `!'()*` unescaped. The query parser already
 * reads them so, but the contract validator refuses RFC 3986's reserved characters unescaped in a
 * query value. So each name and value is written once more in the spelling the validator takes:
 * decoded the form way, then percent-encoded (a space as `%20`, a literal plus stays `%2B`). What
 * the handlers read is unchanged, and a part that does not decode is left as sent, for the
 * validator to refuse.
 */
import type { RequestHandler } from 'express';

export const formEncodedQuery: RequestHandler = function formEncodedQuery(req, _res, next) {
  const at = req.url.indexOf('?');
  if (at >= 0) {
    const query = req.url.slice(at + 1);
    const canonical = canonicalQuery(query);
    if (canonical !== query) {
      req.url = `${req.url.slice(0, at)}?${canonical}`;
      req.originalUrl = `${req.originalUrl.slice(0, req.originalUrl.indexOf('?'))}?${canonical}`;
    }
  }
  next();
};

/** The query `query` (without its `?`) with every name and value in one percent-encoded spelling. */
function canonicalQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const parts = eq < 0 ? [pair] : [pair.slice(0, eq), pair.slice(eq + 1)];
      return parts.map(recode).join('=');
    })
    .join('&');
}

function recode(part: string): string {
  let text: string;
  try {
    text = decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return part;
  }
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
