/**
 * One ranked query across posts, projects and people, on the generated tsvector columns
 * (GIN-indexed). The visibility rules are the same as for reading each thing directly, inside
 * the SQL, so a result the caller could not open is never counted, ranked or shown.
 * Snippets are computed only for the page being returned. Each kind of result also needs the
 * scope that reads it directly: projects need projects.read, jobs jobs.read, people profile.read.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchPage, SearchResultType } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../http/actor.js';
import { ProblemError } from '../http/problem.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import type { ScopeId } from '../keys/scopes.js';
import type { SearchCache } from './search-cache.js';
import { readableSql } from '../projects/projects.service.js';
import { boundRows } from '../db/hot-read.js';

const MAX_OFFSET = 10_000;
const MARK_START = '\u0001';
const MARK_END = '\u0002';
const HEADLINE = `StartSel=${MARK_START},StopSel=${MARK_END},MaxWords=30,MinWords=10,MaxFragments=2,FragmentDelimiter=" … "`;

const isOffsetCursor = (v: unknown): v is { o: number } =>
  typeof v === 'object' &&
  v !== null &&
  Number.isInteger((v as { o?: unknown }).o) &&
  (v as { o: number }).o > 0 &&
  (v as { o: number }).o <= MAX_OFFSET;

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** HTML-escaped, with the matched words in <mark>. */
export function markSnippet(raw: string): string {
  return escapeHtml(raw.replace(/\s+/g, ' ').trim()).replaceAll(MARK_START, '<mark>').replaceAll(MARK_END, '</mark>');
}

const badQuery = (detail: string) =>
  new ProblemError(400, 'invalid-query', 'Invalid search query', detail, {
    errors: [{ path: '/query/q', message: detail }],
  });

/**
 * Ranking every match of a very common word costs a read of every matching document (about
 * 0.6 s for 100k posts). Each kind ranks its newest CANDIDATES_PER_KIND matches instead, which the
 * planner finds from the newest end of the primary key (dense matches) or the GIN index
 * (rare ones) without touching the rest.
 */
const CANDIDATES_PER_KIND = 1_000;
/**
 * The query in each arm (not from the CTE), so the planner sees its words and can tell a common
 * word from a rare one: the statement is unnamed, planned when its values are bound.
 */
const MATCH = `websearch_to_tsquery('english', ?)`;
const rankNewest = (type: SearchResultType, candidates: string) =>
  `select '${type}'::text as type, c.id, ts_rank(c.search, q.query) as score
   from (${candidates} limit ${CANDIDATES_PER_KIND}) c cross join q`;

const noWords = (): never => {
  throw badQuery('The query has no words to search for (only punctuation, operators or very common words).');
};

async function hasWords(em: EntityManager, q: string): Promise<boolean> {
  const [row] = await boundRows<{ n: number }>(em, `select numnode(websearch_to_tsquery('english', ?)) as n`, [q]);
  return Number(row?.n ?? 0) > 0;
}

export type SearchQuery = { q: string; type?: SearchResultType; limit: number; cursor?: string };
type Row = {
  type: SearchResultType;
  id: string;
  score: number;
  title: string;
  username: string | null;
  snippet: string;
  generation: string;
  shared: boolean;
};

/** One UNION arm per kind of result the caller may see, with its parameters in order. */
function armsFor(actor: Actor, query: SearchQuery) {
  const me = actor.userId;
  const arms: string[] = [];
  const types: SearchResultType[] = [];
  const params: unknown[] = [];
  // Each kind of result also needs the scope that reads it directly (search itself needs content.read).
  const may = (scope: ScopeId) => (actor.scopes as readonly string[]).includes(scope);
  const wants = (type: SearchResultType, scope: ScopeId) => {
    if ((query.type && query.type !== type) || !may(scope)) return false;
    types.push(type);
    return true;
  };
  if (wants('post', 'content.read')) {
    // The project's visibility per candidate by its primary key (not a join that would hash every project).
    arms.push(
      rankNewest(
        'post',
        `select p.id, p.search from posts p
      where p.search @@ ${MATCH}
        and (p.hidden_at is null or p.author_id = ?)
        and (p.project_id is null or exists (select 1 from projects pr where pr.id = p.project_id
          and ${readableSql('pr', 'pr.id in (select project_id from member)')}))
      order by p.id desc`,
      ),
    );
    params.push(query.q, me, me);
  }
  if (wants('project', 'projects.read')) {
    arms.push(
      rankNewest(
        'project',
        `select pr.id, pr.search from projects pr
      where pr.search @@ ${MATCH} and ${readableSql('pr', 'pr.id in (select project_id from member)')}
      order by pr.id desc`,
      ),
    );
    params.push(query.q, me);
  }
  if (wants('job', 'jobs.read')) {
    arms.push(
      rankNewest(
        'job',
        `select j.id, j.search from jobs j
      where j.search @@ ${MATCH} and j.status = 'open' and j.expires_at > now()
      order by j.id desc`,
      ),
    );
    params.push(query.q);
  }
  if (wants('user', 'profile.read')) {
    arms.push(`select 'user'::text as type, u.id, greatest(ts_rank(u.search, q.query), ts_rank(u.search, q.simple)) as score
      from users u cross join q
      where q.words > 0 and u.search @@ (${MATCH} || websearch_to_tsquery('simple', ?))`); // one tsquery, which the GIN index can answer
    params.push(query.q, query.q);
  }
  return { arms, types, params };
}

const COUNTER = `(select case when is_called then last_value else 0 end from search_changes)`;
/** Whether the caller sees only what everybody sees: no private project owned or joined, no hidden post of their own. */
const SHARED = `not (exists (select 1 from projects where owner_id = ? and visibility = 'private')
  or exists (select 1 from project_members m join projects p on p.id = m.project_id where m.user_id = ? and p.visibility = 'private')
  or exists (select 1 from posts where author_id = ? and hidden_at is not null))`;

/**
 * The ranked page with its snippets, in one round trip. Each row also carries, as of this
 * query's snapshot, the search cache's counter and whether the caller sees only public things
 * (src/search/search-cache.ts).
 */
function rankedPage(
  em: EntityManager,
  me: string,
  query: SearchQuery,
  offset: number,
  arms: string[],
  armParams: unknown[],
) {
  return boundRows<Row>(
    em,
    `with q as (select query, simple, numnode(query) as words, ${COUNTER} as generation, ${SHARED} as shared
       from (select websearch_to_tsquery('english', ?) as query, websearch_to_tsquery('simple', ?) as simple) parsed),
     member as (select project_id from project_members where user_id = ?),
     ranked as (${arms.join(' union all ')} order by score desc, id desc limit ? offset ?)
     select r.type, r.id, r.score, q.generation, q.shared,
       coalesce(p.title, pr.name, j.title, u.display_name) as title, u.username,
       case r.type
         when 'post' then ts_headline('english', p.title || ' — ' || p.body, q.query, ?)
         when 'project' then ts_headline('english', pr.name || ' — ' || pr.tagline || ' ' || pr.description, q.query, ?)
         when 'job' then ts_headline('english', j.title || ' — ' || j.company || ': ' || j.description, q.query, ?)
         else ts_headline('simple', u.display_name || ' (@' || u.username || ') ' || u.bio || ' ' || shipyard_words(u.skills), q.simple, ?)
       end as snippet
     from ranked r cross join q
     left join posts p on r.type = 'post' and p.id = r.id
     left join projects pr on r.type = 'project' and pr.id = r.id
     left join jobs j on r.type = 'job' and j.id = r.id
     left join users u on r.type = 'user' and u.id = r.id
     order by r.score desc, r.id desc`,
    [me, me, me, query.q, query.q, me, ...armParams, query.limit + 1, offset, HEADLINE, HEADLINE, HEADLINE, HEADLINE],
  );
}

/** The cache's counter, and whether the caller sees only public things: which stored page may answer. */
async function cacheState(em: EntityManager, me: string): Promise<{ generation: bigint; shared: boolean }> {
  const [row] = await boundRows<{ generation: string; shared: boolean }>(
    em,
    `select ${COUNTER} as generation, ${SHARED} as shared`,
    [me, me, me],
  );
  return { generation: BigInt(row!.generation), shared: row!.shared };
}

/**
 * Whether no change counted up to now is still uncommitted: every writer holds the shared
 * lock from its count until its transaction has ended, so the exclusive try succeeds only
 * when none is in flight (it never waits, and is released when this statement ends). A search
 * run after a quiet point sees every change counted before it.
 */
async function quietPoint(em: EntityManager): Promise<{ quiet: boolean; generation: bigint }> {
  const [row] = await boundRows<{ quiet: boolean; generation: string }>(
    em,
    `select pg_try_advisory_xact_lock(21320, 1) as quiet, ${COUNTER} as generation`,
    [],
  );
  return { quiet: row!.quiet, generation: BigInt(row!.generation) };
}

const cacheKey = (shared: boolean, me: string, types: SearchResultType[], query: SearchQuery, offset: number) =>
  JSON.stringify([shared ? null : me, types, query.q, query.limit, offset]);

export async function search(
  em: EntityManager,
  actor: Actor,
  query: SearchQuery,
  cache?: SearchCache<SearchPage>,
): Promise<SearchPage> {
  const offset = decodeCursor(query.cursor, isOffsetCursor)?.o ?? 0;
  const me = actor.userId;
  const { arms, types, params } = armsFor(actor, query);
  if (arms.length === 0) return (await hasWords(em, query.q)) ? { items: [], nextCursor: null } : noWords();
  const state = cache?.enabled ? await cacheState(em, me) : undefined;
  const cached = state && cache!.get(state.generation, cacheKey(state.shared, me, types, query, offset));
  if (cached) return cached;
  const quiet = state && (await quietPoint(em));

  const rows = await rankedPage(em, me, query, offset, arms, params);
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
      path: r.type === 'user' ? `/api/v1/users/${r.username}` : `/api/v1/${r.type}s/${r.id}`,
    })),
    nextCursor: more && next <= MAX_OFFSET ? encodeCursor({ o: next }) : null,
  };
  // Kept only when the page is known to hold every change counted under this value: the search
  // ran after a quiet point and the counter did not move meanwhile (an empty page carries no proof).
  const proof = rows[0];
  if (
    state &&
    quiet?.quiet &&
    quiet.generation === state.generation &&
    proof &&
    BigInt(proof.generation) === state.generation
  ) {
    cache!.set(state.generation, cacheKey(proof.shared, me, types, query, offset), result);
  }
  return result;
}
