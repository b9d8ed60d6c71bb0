/**
 * The feeds' typed reads. A feed is read as anybody without a key reads it (`postReadable(eb,
 * null)`): public projects only, no hidden post. Each feed's page is one query: a project's
 * build logs and roadmap events are one UNION ALL, ordered by when each happened; a person's or a
 * tag's posts one select. The same query, without the bodies, gives the page's stamp (its newest
 * change and a digest of what it holds), so a conditional request is answered before any entry is
 * read in full.
 */
import { type Compilable, type InferResult, type Kysely, sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type DB, type HotRead, hotRead, reads } from '../db/reads.js';
import { postReadable, projectReadable } from '../access/access.queries.js';

export const PROJECT_FEED_KINDS = ['build_log', 'milestone_added', 'milestone_done', 'milestone_moved'] as const;
export const POST_FEED_KINDS = ['post', 'build_log'] as const;
export type FeedKind = (typeof PROJECT_FEED_KINDS)[number] | (typeof POST_FEED_KINDS)[number];

/** Whose entries a feed holds: a project's, a person's (by id), or a tag's. */
export type FeedSource = { projectId: string } | { authorId: string } | { tag: string };

/** Where a page starts: after the entry with this time (as PostgreSQL prints it), key and kind. */
export type FeedPosition = { at: string; key: string; kind: string };

export type FeedPageQuery = {
  source: FeedSource;
  kinds: readonly FeedKind[];
  after?: FeedPosition | undefined;
  limit: number;
};

/** The column every part of the union has, in one order; `light` leaves the bodies out (the stamp). */
type Light = { light: boolean };

const noText = sql<string | null>`null::text`;
const noList = sql<string[] | null>`null::text[]`;

/** Posts and build logs, as anybody may read them. */
function postEntries(db: Kysely<DB>, source: FeedSource, kinds: readonly FeedKind[], { light }: Light) {
  let query = db
    .selectFrom('Post as po')
    .innerJoin('User as u', 'u.id', 'po.author')
    .leftJoin('Project as pr', 'pr.id', 'po.project')
    .select((eb) => [
      sql<FeedKind>`${eb.ref('po.kind')}::text`.as('kind'),
      'po.id as key',
      'po.createdAt as at',
      'po.updatedAt as updated',
      'po.title as title',
      light ? noText.as('body') : sql<string | null>`${eb.ref('po.body')}`.as('body'),
      sql<string[] | null>`${eb.ref('po.mediaIds')}`.as('media'),
      sql<string[] | null>`${eb.ref('po.tags')}`.as('tags'),
      sql<string | null>`${eb.ref('po.health')}::text`.as('health'),
      'u.username as username',
      'u.displayName as authorname',
      sql<string | null>`${eb.ref('pr.id')}::text`.as('onproject'),
      sql<string | null>`${eb.ref('pr.name')}`.as('projectname'),
      noText.as('datefrom'),
      noText.as('dateto'),
      noText.as('reason'),
      noText.as('onmilestone'),
    ])
    .where((eb) => postReadable(eb, null))
    .where(
      'po.kind',
      'in',
      kinds.filter((k): k is 'post' | 'build_log' => k === 'post' || k === 'build_log'),
    );
  if ('projectId' in source) query = query.where('po.project', '=', source.projectId);
  if ('authorId' in source) query = query.where('po.author', '=', source.authorId);
  if ('tag' in source) query = query.where('po.tags', '@>', sql<string[]>`array[${source.tag}]::text[]`);
  return query;
}

/** A project's milestones, added or done: written by its owner. */
function milestoneEntries(
  db: Kysely<DB>,
  projectId: string,
  kind: 'milestone_added' | 'milestone_done',
  { light }: Light,
) {
  const query = db
    .selectFrom('Milestone as m')
    .innerJoin('Project as p', 'p.id', 'm.project')
    .innerJoin('User as u', 'u.id', 'p.owner')
    .select((eb) => [
      sql<FeedKind>`${kind}::text`.as('kind'),
      'm.id as key',
      sql<Date>`${eb.ref(kind === 'milestone_added' ? 'm.createdAt' : 'm.completedAt')}`.as('at'),
      'm.updatedAt as updated',
      'm.title as title',
      light ? noText.as('body') : sql<string | null>`${eb.ref('m.description')}`.as('body'),
      noList.as('media'),
      noList.as('tags'),
      noText.as('health'),
      'u.username as username',
      'u.displayName as authorname',
      sql<string | null>`${eb.ref('p.id')}::text`.as('onproject'),
      sql<string | null>`${eb.ref('p.name')}`.as('projectname'),
      noText.as('datefrom'),
      // The added entry tells the first due date the milestone was given, not today's: each move
      // after it is an entry of its own, and history is not rewritten.
      sql<string | null>`coalesce(${eb.ref('m.originalDueDate')}, ${eb.ref('m.dueDate')})::text`.as('dateto'),
      noText.as('reason'),
      sql<string | null>`${eb.ref('m.id')}::text`.as('onmilestone'),
    ])
    .where('m.project', '=', projectId)
    // The feed's head checks the project too; a roadmap's events are never read without it.
    .where((eb) => projectReadable(eb, null));
  return kind === 'milestone_done'
    ? query.where('m.status', '=', 'done').where('m.completedAt', 'is not', null)
    : query;
}

/** A project's due-date moves (a first date set is no move), each with its reason. */
function moveEntries(db: Kysely<DB>, projectId: string) {
  return db
    .selectFrom('MilestoneDueDateChange as dc')
    .innerJoin('Milestone as m', 'm.id', 'dc.milestone')
    .innerJoin('Project as p', 'p.id', 'm.project')
    .innerJoin('User as u', 'u.id', 'p.owner')
    .select((eb) => [
      sql<FeedKind>`${'milestone_moved'}::text`.as('kind'),
      'dc.id as key',
      'dc.changedAt as at',
      sql<Date>`greatest(${eb.ref('dc.changedAt')}, ${eb.ref('m.updatedAt')})`.as('updated'),
      'm.title as title',
      noText.as('body'),
      noList.as('media'),
      noList.as('tags'),
      noText.as('health'),
      'u.username as username',
      'u.displayName as authorname',
      sql<string | null>`${eb.ref('p.id')}::text`.as('onproject'),
      sql<string | null>`${eb.ref('p.name')}`.as('projectname'),
      sql<string | null>`${eb.ref('dc.fromDate')}::text`.as('datefrom'),
      sql<string | null>`${eb.ref('dc.toDate')}::text`.as('dateto'),
      sql<string | null>`${eb.ref('dc.reason')}`.as('reason'),
      sql<string | null>`${eb.ref('m.id')}::text`.as('onmilestone'),
    ])
    .where('m.project', '=', projectId)
    .where((eb) => projectReadable(eb, null))
    .where('dc.fromDate', 'is not', null);
}

/** Every entry of the feed, in one relation: the posts, and for a project its roadmap's events. */
function entries(db: Kysely<DB>, q: FeedPageQuery, light: Light) {
  const wanted = new Set(q.kinds);
  // Every part has the same columns in the same order; their builders' types differ only in the tables joined.
  type Part = ReturnType<typeof postEntries>;
  const parts: Part[] = [];
  if (wanted.has('post') || wanted.has('build_log')) parts.push(postEntries(db, q.source, q.kinds, light));
  if ('projectId' in q.source) {
    const { projectId } = q.source;
    if (wanted.has('milestone_added'))
      parts.push(milestoneEntries(db, projectId, 'milestone_added', light) as unknown as Part);
    if (wanted.has('milestone_done'))
      parts.push(milestoneEntries(db, projectId, 'milestone_done', light) as unknown as Part);
    if (wanted.has('milestone_moved')) parts.push(moveEntries(db, projectId) as unknown as Part);
  }
  // The service always asks for one kind at least (the contract's minItems, and every feed's kinds).
  return parts.reduce((all, part) => all.unionAll(part));
}

/** One page of the feed, newest first, after `q.after`. */
function page(db: Kysely<DB>, q: FeedPageQuery, light: Light) {
  let query = db
    .selectFrom(entries(db, q, light).as('e'))
    .select([
      'e.kind as kind',
      'e.key as key',
      'e.at as at',
      'e.updated as updated',
      'e.title as title',
      'e.body as body',
      'e.media as mediaIds',
      'e.tags as tags',
      'e.health as health',
      'e.username as username',
      'e.authorname as displayName',
      'e.onproject as projectId',
      'e.projectname as projectName',
      'e.datefrom as fromDate',
      'e.dateto as toDate',
      'e.reason as reason',
      'e.onmilestone as milestoneId',
      sql<string>`e.at::text`.as('position'),
    ]);
  const { after } = q;
  if (after)
    query = query.where(
      (eb) =>
        sql<boolean>`(${eb.ref('e.at')}, ${eb.ref('e.key')}, ${eb.ref('e.kind')}) < (${after.at}::timestamptz, ${after.key}::uuid, ${after.kind})`,
    );
  return query.orderBy('e.at', 'desc').orderBy('e.key', 'desc').orderBy('e.kind', 'desc').limit(q.limit);
}

/** What a page holds, in brief (`feedStamp`): over the same rows as the page, without their bodies. */
function stamp(db: Kysely<DB>, q: FeedPageQuery) {
  return db
    .selectFrom(page(db, q, { light: true }).as('pg'))
    .select([
      sql<string | null>`max(pg.updated)::text`.as('newest'),
      sql<string>`md5(coalesce(string_agg(concat_ws(' ', pg.kind, pg.key, pg.updated, pg.username, pg."displayName", pg."projectName"), ',' order by pg.at desc, pg.key desc, pg.kind desc), ''))`.as(
        'digest',
      ),
    ]);
}

type Slots = { source: string; limit: number; at: string; key: string; kind: string };

/**
 * A feed query's shape depends on whose feed it is, the kinds asked for and whether it starts
 * after an entry: each shape is a hot read of its own, prepared once (a union of four parts
 * costs more to plan than to run), its values the source, the position and the limit.
 */
function preparedByShape<Q extends Compilable<object>>(build: (db: Kysely<DB>, q: FeedPageQuery) => Q) {
  const shapes = new Map<string, HotRead<Slots, InferResult<Q>>>();
  return (em: EntityManager, q: FeedPageQuery) => {
    const by = Object.keys(q.source)[0] as 'projectId' | 'authorId' | 'tag';
    const kinds = [...q.kinds].sort();
    const shape = JSON.stringify([by, kinds, q.after !== undefined]);
    let statement = shapes.get(shape);
    if (!statement) {
      const names: (keyof Slots)[] = q.after ? ['source', 'limit', 'at', 'key', 'kind'] : ['source', 'limit'];
      statement = hotRead(names, (db, v: Slots) =>
        build(db, {
          source: { [by]: v.source } as FeedSource,
          kinds,
          after: q.after ? { at: v.at, key: v.key, kind: v.kind } : undefined,
          limit: v.limit,
        }),
      );
      shapes.set(shape, statement);
    }
    const source = Object.values(q.source)[0] as string;
    // Without a position, its slots are not in the statement: what they hold is never read.
    const { at = '', key = '', kind = '' } = q.after ?? {};
    return statement(em, { source, limit: q.limit, at, key, kind });
  };
}

/** The entries of a page, whole. */
export const feedPage = preparedByShape((db, q) => page(db, q, { light: false }));

/**
 * What a page holds, in brief: its newest change (PostgreSQL's text, to the microsecond) and a
 * digest of each entry's kind, key and change time, its author's names and its project's, in
 * order. Any entry added, removed, hidden or changed changes the digest, and so does a name it shows.
 */
const stampOf = preparedByShape(stamp);
export const feedStamp = async (em: EntityManager, q: FeedPageQuery) => (await stampOf(em, q))[0]!;

/** A public project's name and tagline, when it last changed, and its owner: the head of its feed. */
export const feedHeadOfProject = async (em: EntityManager, projectId: string) =>
  (await projectHead(em, { projectId }))[0];
const projectHead = hotRead(['projectId'], (db, v: { projectId: string }) =>
  db
    .selectFrom('Project as p')
    .innerJoin('User as u', 'u.id', 'p.owner')
    .select([
      'p.name as name',
      'p.tagline as tagline',
      'p.updatedAt as updatedAt',
      'u.username as username',
      'u.displayName as displayName',
    ])
    .where('p.id', '=', v.projectId)
    .where((eb) => projectReadable(eb, null)),
);

/** A person by username: the head of their feed. */
export const feedHeadOfUser = async (em: EntityManager, username: string) => (await userHead(em, { username }))[0];
const userHead = hotRead(['username'], (db, v: { username: string }) =>
  db
    .selectFrom('User as u')
    .select(['u.id as id', 'u.username as username', 'u.displayName as displayName'])
    .where('u.username', '=', v.username),
);

/** One entry as the feed's page reads it. */
export type FeedRow = Awaited<ReturnType<typeof feedPage>>[number];

/** A first page's mark (./feed-mark.entity.ts): the digest it was last seen changed to, and when. */
export const feedMarkOf = async (em: EntityManager, page: string) => (await markOf(em, { page }))[0];
const markOf = hotRead(['page'], (db, v: { page: string }) =>
  db
    .selectFrom('FeedMark as m')
    .select(['m.digest as digest', 'm.modifiedAt as modifiedAt'])
    .where('m.page', '=', v.page),
);

/**
 * Marks a first page as changed to `digest`, now: to the second, and at least a second after the
 * mark before it, so that a date an HTTP client holds (whole seconds) always tells two contents
 * apart. Instances that see the same change together write it once; the mark as it then stands.
 */
export async function moveFeedMark(em: EntityManager, page: string, digest: string): Promise<Date> {
  const [moved] = await reads(em)
    .insertInto('FeedMark')
    .values({ page, digest, modifiedAt: sql<Date>`date_trunc('second', now())` })
    .onConflict((oc) =>
      oc
        .column('page')
        .doUpdateSet({
          digest: sql.ref('excluded.digest'),
          modifiedAt: sql`greatest(${sql.ref('excluded.modified_at')}, ${sql.ref('feed_marks.modified_at')} + interval '1 second')`,
        })
        .where(sql<boolean>`${sql.ref('feed_marks.digest')} <> ${sql.ref('excluded.digest')}`),
    )
    .returning('modifiedAt')
    .execute();
  if (moved) return new Date(moved.modifiedAt);
  // Another instance wrote this digest first: its mark stands.
  const mark = await feedMarkOf(em, page);
  return new Date(mark!.modifiedAt);
}
