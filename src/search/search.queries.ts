/**
 * Search's typed statement (src/db/reads.ts): one ranked query across posts, projects, jobs and
 * people on the generated tsvector columns (GIN-indexed), with the same read rules as reading
 * each thing directly (`postReadable`, `projectReadable`), so a result the caller could not open
 * is never counted, ranked or shown. Snippets are computed only for the page returned.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Expression, expressionBuilder, type Kysely, sql } from 'kysely';
import type { SearchResultType } from '../../codegen/generated/api/types.gen.js';
import { type DB, hotRead } from '../db/reads.js';
import { postReadable, projectReadable } from '../access/access.queries.js';

/**
 * Ranking every match of a very common word costs a read of every matching document. Each kind
 * ranks its newest CANDIDATES_PER_KIND matches instead, which the planner finds from the newest
 * end of the primary key (dense matches) or the GIN index (rare ones) without touching the rest.
 */
const CANDIDATES_PER_KIND = 1_000;

const MARK_START = '\u0001';
const MARK_END = '\u0002';
const HEADLINE = `StartSel=${MARK_START},StopSel=${MARK_END},MaxWords=30,MinWords=10,MaxFragments=2,FragmentDelimiter=" … "`;
export const SNIPPET_MARKS = { start: MARK_START, end: MARK_END } as const;

type Tsquery = { readonly tsquery: unique symbol };
/**
 * The caller's words as an English query (stems, stop words dropped). Written into each arm
 * rather than read from the CTE, so that the planner sees the words and can tell a common one
 * from a rare one: the statement is bound, not prepared, and planned with its values.
 */
const english = (q: string) => sql<Tsquery>`websearch_to_tsquery('english', ${q})`;
const simple = (q: string) => sql<Tsquery>`websearch_to_tsquery('simple', ${q})`;

/** The search counter's value as of this statement's snapshot (src/search/search-cache.ts). */
const counter = (db: Kysely<DB>) =>
  db
    .selectFrom('search_changes')
    .select((eb) => eb.case().when('is_called', '=', true).then(eb.ref('last_value')).else('0').end().as('value'));

/** Whether `userId` sees only what everybody sees: no private project owned or joined, no hidden post of their own. */
const seesOnlyShared = (userId: string | null) => {
  const eb = expressionBuilder<DB, never>();
  return eb.not(
    eb.or([
      eb.exists(
        eb
          .selectFrom('Project as p')
          .select('p.id as id')
          .where('p.owner', '=', userId)
          .where('p.visibility', '=', 'private'),
      ),
      eb.exists(
        eb
          .selectFrom('ProjectMember as m')
          .innerJoin('Project as p', 'p.id', 'm.project')
          .select('p.id as id')
          .where('m.user', '=', userId)
          .where('p.visibility', '=', 'private'),
      ),
      eb.exists(
        eb
          .selectFrom('Post as po')
          .select('po.id as id')
          .where('po.author', '=', userId)
          .where('po.hiddenAt', 'is not', null),
      ),
    ]),
  );
};

/**
 * The search cache's state, in one round trip: its counter and whether the caller sees only
 * public things (which stored page may answer), and whether no change counted up to now is still
 * uncommitted (whether a page searched next may be stored). Every writer holds the shared lock
 * from its count until its transaction has ended, so the exclusive try succeeds only when none
 * is in flight (it never waits, and is released when this statement ends).
 */
export const cacheState = hotRead(['userId'], (db, v: { userId: string | null }) =>
  db.selectNoFrom((eb) => [
    counter(db).as('generation'),
    seesOnlyShared(v.userId).as('shared'),
    eb.fn<boolean>('pg_try_advisory_xact_lock', [sql.lit(21320), sql.lit(1)]).as('quiet'),
  ]),
);

/** Whether the words make a query at all (not only punctuation, operators or stop words). */
export const wordCount = hotRead(['q'], (db, v: { q: string }) =>
  db.selectNoFrom((eb) => eb.fn<number>('numnode', [english(v.q)]).as('n')),
);

/** Whether the search vector `column` matches the query. */
const matches = (column: Expression<unknown>, query: Expression<Tsquery>) => sql<boolean>`${column} @@ (${query})`;

/**
 * The candidates of one kind, with their search vectors: the newest CANDIDATES_PER_KIND matches
 * the caller may read (people are few enough to rank them all).
 */
function candidates(db: Kysely<DB>, type: SearchResultType, q: string, userId: string | null) {
  switch (type) {
    case 'post':
      return db
        .selectFrom('Post as po')
        .select(['po.id as id', 'po.search as search'])
        .where((eb) => matches(eb.ref('po.search'), english(q)))
        .where((eb) => postReadable(eb, userId))
        .orderBy('po.id', 'desc')
        .limit(CANDIDATES_PER_KIND);
    case 'project':
      return db
        .selectFrom('Project as p')
        .select(['p.id as id', 'p.search as search'])
        .where((eb) => matches(eb.ref('p.search'), english(q)))
        .where((eb) => projectReadable(eb, userId))
        .orderBy('p.id', 'desc')
        .limit(CANDIDATES_PER_KIND);
    case 'job':
      return db
        .selectFrom('Job as j')
        .select(['j.id as id', 'j.search as search'])
        .where((eb) => matches(eb.ref('j.search'), english(q)))
        .where('j.status', '=', 'open')
        .where('j.expiresAt', '>', sql<Date>`now()`)
        .orderBy('j.id', 'desc')
        .limit(CANDIDATES_PER_KIND);
    case 'user':
      // One tsquery (English or simple words), which the GIN index can answer.
      return db
        .selectFrom('User as u')
        .select(['u.id as id', 'u.search as search'])
        .where((eb) => matches(eb.ref('u.search'), sql<Tsquery>`${english(q)} || ${simple(q)}`))
        .where((eb) => eb(eb.fn('numnode', [english(q)]), '>', 0));
  }
}

/** One UNION arm: a kind's candidates, ranked against the query (people by the better of English and simple words). */
function rankedArm(db: Kysely<DB>, type: SearchResultType, q: string, userId: string | null) {
  return db.selectFrom(candidates(db, type, q, userId).as('c')).select((eb) => {
    const rank = (query: Expression<Tsquery>) => eb.fn<number>('ts_rank', [eb.ref('c.search'), query]);
    return [
      sql.lit<SearchResultType>(type).as('type'),
      'c.id as id',
      (type === 'user' ? eb.fn<number>('greatest', [rank(english(q)), rank(simple(q))]) : rank(english(q))).as('score'),
    ];
  });
}

/**
 * The ranked page with its snippets for the kinds in `types`, in one round trip. Each row also
 * carries, as of this statement's snapshot, the search cache's counter and whether the caller
 * sees only public things.
 */
function rankedPage(types: readonly SearchResultType[]) {
  return hotRead(
    ['q', 'userId', 'limit', 'offset'],
    (db, v: { q: string; userId: string | null; limit: number; offset: number }) => {
      const [first, ...rest] = types.map((t) => rankedArm(db, t, v.q, v.userId));
      const ranked = first!
        .unionAll(rest)
        .orderBy('score', 'desc')
        .orderBy('id', 'desc')
        .limit(v.limit)
        .offset(v.offset);
      const headline = (config: 'english' | 'simple', text: ReturnType<typeof sql<string>>) =>
        sql<string>`ts_headline(${sql.lit(config)}, ${text}, ${config === 'english' ? english(v.q) : simple(v.q)}, ${sql.lit(HEADLINE)})`;
      return db
        .selectFrom(ranked.as('r'))
        .leftJoin('Post as p', (j) => j.on('r.type', '=', sql.lit('post')).onRef('p.id', '=', 'r.id'))
        .leftJoin('Project as pr', (j) => j.on('r.type', '=', sql.lit('project')).onRef('pr.id', '=', 'r.id'))
        .leftJoin('Job as j', (j) => j.on('r.type', '=', sql.lit('job')).onRef('j.id', '=', 'r.id'))
        .leftJoin('User as u', (j) => j.on('r.type', '=', sql.lit('user')).onRef('u.id', '=', 'r.id'))
        .select((eb) => [
          'r.type as type',
          'r.id as id',
          'r.score as score',
          eb.fn.coalesce('p.title', 'pr.name', 'j.title', 'u.displayName').$notNull().as('title'),
          'u.username as username',
          eb
            .case('r.type')
            .when('post')
            .then(headline('english', sql`${eb.ref('p.title')} || ' — ' || ${eb.ref('p.body')}`))
            .when('project')
            .then(
              headline(
                'english',
                sql`${eb.ref('pr.name')} || ' — ' || ${eb.ref('pr.tagline')} || ' ' || ${eb.ref('pr.description')}`,
              ),
            )
            .when('job')
            .then(
              headline(
                'english',
                sql`${eb.ref('j.title')} || ' — ' || ${eb.ref('j.company')} || ': ' || ${eb.ref('j.description')}`,
              ),
            )
            .else(
              headline(
                'simple',
                sql`${eb.ref('u.displayName')} || ' (@' || ${eb.ref('u.username')} || ') ' || ${eb.ref('u.bio')} || ' ' || shipyard_words(${eb.ref('u.skills')})`,
              ),
            )
            .end()
            .as('snippet'),
          counter(db).as('generation'),
          seesOnlyShared(v.userId).as('shared'),
        ])
        .orderBy('r.score', 'desc')
        .orderBy('r.id', 'desc');
    },
    { prepared: false },
  );
}

const pages = new Map<string, ReturnType<typeof rankedPage>>();
/** The ranked page's statement for these kinds (each combination's is built once). */
function pageFor(types: readonly SearchResultType[]) {
  const key = types.join(',');
  let page = pages.get(key);
  if (!page) {
    page = rankedPage(types);
    pages.set(key, page);
  }
  return page;
}

/** The ranked page for these kinds. */
export const searchPage = (
  em: EntityManager,
  types: readonly SearchResultType[],
  v: { q: string; userId: string | null; limit: number; offset: number },
) => pageFor(types)(em, v);

/** The statement `searchPage` runs, as text and parameters: the benchmark's raw pg baseline runs the same one. */
export const searchStatement = (em: EntityManager, types: readonly SearchResultType[]) => pageFor(types).statement(em);
