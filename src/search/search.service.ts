/**
 * One ranked query across posts, projects and people, on the generated tsvector columns
 * (GIN-indexed). The visibility rules are the same as for reading each thing directly, inside
 * the SQL, so a result the caller could not open is never counted, ranked or shown.
 * Snippets are computed only for the page being returned. Each kind of result also needs the
 * scope that reads it directly: projects need projects.read, jobs jobs.read, people profile.read.
 */
import { API_BASE } from '../kernel/contract.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchPage, SearchResultType } from '../../codegen/generated/api/types.gen.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { ProblemError } from '../kernel/problem.js';
import { escapeHtml } from '../kernel/text.js';
import { cursorList, decodeCursor, encodeCursor, isOffsetUpTo } from '../kernel/cursor.js';
import type { ScopeId } from '../kernel/scopes.js';
import type { SearchCache } from './search-cache.js';
import { cacheState, SNIPPET_MARKS, searchPage, wordCount } from './search.queries.js';

/** The cache's counter, whether the caller sees only public things, and whether no counted change is in flight (search.queries.ts). */
async function cacheNow(em: EntityManager, userId: string | null) {
  const [row] = await cacheState(em, { userId });
  return { generation: BigInt(row!.generation!), shared: row!.shared === true, quiet: row!.quiet === true };
}

const MAX_OFFSET = 10_000;

const isOffsetCursor = isOffsetUpTo(MAX_OFFSET);

/** HTML-escaped, with the matched words in <mark>. */
export function markSnippet(raw: string): string {
  return escapeHtml(raw.replace(/\s+/g, ' ').trim())
    .replaceAll(SNIPPET_MARKS.start, '<mark>')
    .replaceAll(SNIPPET_MARKS.end, '</mark>');
}

const badQuery = (detail: string) =>
  new ProblemError(400, 'invalid-query', 'Invalid search query', detail, {
    errors: [{ path: '/query/q', message: detail }],
  });

const noWords = (): never => {
  throw badQuery('The query has no words to search for (only punctuation, operators or very common words).');
};

async function hasWords(em: EntityManager, q: string): Promise<boolean> {
  const [row] = await wordCount(em, { q });
  return Number(row?.n ?? 0) > 0;
}

export type SearchQuery = { q: string; type?: SearchResultType; limit: number; cursor?: string };

/** The kinds of result the caller asked for and may see: each also needs the scope that reads it directly. */
function kindsFor(actor: Actor, query: SearchQuery): SearchResultType[] {
  const scopes = actor.scopes as readonly string[];
  const kinds: [SearchResultType, ScopeId][] = [
    ['post', 'content.read'],
    ['project', 'projects.read'],
    ['job', 'jobs.read'],
    ['user', 'profile.read'],
  ];
  return kinds
    .filter(([type, scope]) => (!query.type || query.type === type) && scopes.includes(scope))
    .map(([t]) => t);
}

const cacheKey = (shared: boolean, me: string, types: SearchResultType[], query: SearchQuery, offset: number) =>
  JSON.stringify([shared ? null : me, types, query.q, query.limit, offset]);

export async function search(
  em: EntityManager,
  actor: Actor,
  query: SearchQuery,
  cache?: SearchCache<SearchPage>,
): Promise<SearchPage> {
  const me = actor.userId;
  const userId = actorId(actor);
  const types = kindsFor(actor, query);
  const list = cursorList('search', types, query.q);
  const offset = decodeCursor(query.cursor, isOffsetCursor, list)?.o ?? 0;
  if (types.length === 0) return (await hasWords(em, query.q)) ? { items: [], nextCursor: null } : noWords();
  const state = cache?.enabled ? await cacheNow(em, userId) : undefined;
  const cached = state && cache!.get(state.generation, cacheKey(state.shared, me, types, query, offset));
  if (cached) return cached;

  const rows = await searchPage(em, types, { q: query.q, userId, limit: query.limit + 1, offset });
  // A query without words (only punctuation, operators or stop words) matches nothing; it is
  // told apart from a query without results only then, so a search is one round trip.
  if (rows.length === 0 && !(await hasWords(em, query.q))) noWords();
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const next = offset + page.length;
  const result: SearchPage = {
    items: page.map((r) => ({
      type: r.type,
      id: r.id,
      title: r.title,
      snippet: markSnippet(r.snippet ?? ''),
      score: Math.round(Number(r.score) * 10_000) / 10_000,
      path: r.type === 'user' ? `${API_BASE}/users/${r.username}` : `${API_BASE}/${r.type}s/${r.id}`,
    })),
    nextCursor: more && next <= MAX_OFFSET ? encodeCursor({ o: next }, list) : null,
  };
  // Kept only when the page is known to hold every change counted under this value: the search
  // ran after a quiet point (the state's) and the counter did not move meanwhile (an empty page
  // carries no proof).
  const proof = rows[0];
  if (state?.quiet && proof?.generation != null && BigInt(proof.generation) === state.generation) {
    cache!.set(state.generation, cacheKey(proof.shared === true, me, types, query, offset), result);
  }
  return result;
}
