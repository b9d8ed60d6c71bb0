/**
 * Typed reads: MikroORM's Kysely integration (`em.getKysely()`), typed from the same entity
 * definitions the ORM writes with, so a wrong table, column or enum value is a type error.
 * Queries name tables and columns as the entities do (`selectFrom('Project as p')`,
 * `p.lookingForCollaborators`, `p.owner` for the owner's id); the ORM's plugin writes the real
 * names. Rows come as PostgreSQL gives them (no value conversion), so every selection names its
 * key with `as` (the plugin would otherwise leave a column's own name) and a timestamp is read
 * through `iso`, the RFC 3339 text the API shows.
 *
 * A hot read (`hotRead`) is built and compiled once and then run, with each call's values, as
 * one named prepared statement, on the ORM's own connection pool or in the request's
 * transaction: PostgreSQL parses it once per connection and may keep its plan, and no query is
 * rebuilt or compiled per request.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InferClassEntityDB } from '@mikro-orm/sql';
import { AliasNode, type Compilable, CompiledQuery, type InferResult, type Kysely, SelectQueryNode, sql } from 'kysely';
import type { entities } from './entities.js';
import { isDatabaseUnavailable } from './unavailable.js';
import { nameStatement } from './named-statements.js';
import { isUuid } from '../kernel/ids.js';
import { notFound } from '../kernel/problem.js';

const READS = { tableNamingStrategy: 'entity', columnNamingStrategy: 'property' } as const;
/** A row as PostgreSQL gives it: a column the entity may leave out (it has a default, or may be null) is there all the same. */
type Stored<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };
type Inferred = {
  [N in keyof InferClassEntityDB<(typeof entities)[number], typeof READS>]: Stored<
    InferClassEntityDB<(typeof entities)[number], typeof READS>[N]
  >;
};
/**
 * The tables as Kysely sees them. MikroORM 7.2's inference from classes drops a many-to-one to
 * an entity that has an `owner` property of its own (it takes the target for a Collection), so
 * the foreign keys to Project are put back here; `test/reads.test.ts` fails when the
 * inference and the schema disagree.
 */
export type DB = Omit<Inferred, 'ProjectMember' | 'Milestone' | 'RoadmapWalk' | 'Post' | 'WebhookSubscription'> & {
  ProjectMember: Inferred['ProjectMember'] & { project: string };
  Milestone: Inferred['Milestone'] & { project: string };
  RoadmapWalk: Inferred['RoadmapWalk'] & { project: string };
  Post: Inferred['Post'] & { project: string | null };
  WebhookSubscription: Inferred['WebhookSubscription'] & { project: string };
  /** The counter the search triggers advance (migration ..._search_changes): a sequence, read as its one-row relation. */
  search_changes: { last_value: string; is_called: boolean };
};

/** Entity managers whose typed reads go to the read replica (DATABASE_READ_URL): see readFromReplica. */
const replicaReaders = new WeakSet<EntityManager>();

/**
 * From now on, `em`'s typed reads outside a transaction go to the read replica, when there is
 * one: for a read that may lag a moment (src/http/replica-reads.ts decides which, and for whom).
 * Writes, and everything inside a transaction, stay on the primary.
 */
export function readFromReplica(em: EntityManager): void {
  replicaReaders.add(em);
}
const connectionType = (em: EntityManager) => (replicaReaders.has(em) ? 'read' : 'write');

/** The request's typed query builder: on its connection, in its transaction if it has one. */
export const reads = (em: EntityManager): Kysely<DB> =>
  em.getKysely<DB>(replicaReaders.has(em) ? { ...READS, type: 'read' } : READS);

/** A timestamp as the API writes it: RFC 3339 in UTC, to the millisecond (as Date#toISOString). */
export const iso = (column: string) =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The row a read by id finds, or a 404 saying `missing`: an id that is not a UUID finds nothing,
 * without a query (PostgreSQL would refuse to compare it with a uuid column).
 */
export async function rowById<T>(id: string, read: () => Promise<readonly T[]>, missing: string): Promise<T> {
  const [row] = isUuid(id) ? await read() : [];
  if (!row) throw notFound(missing);
  return row;
}

/** A row's `createdAt` and `updatedAt` (of the table or alias `of`), as the API shows them. */
export const changeTimesOf = (of: string) =>
  [iso(`${of}.createdAt`).as('createdAt'), iso(`${of}.updatedAt`).as('updatedAt')] as const;

/**
 * A timestamp as the presenters take it: an entity's Date, or a typed read's text from `iso`,
 * which is already what the API shows and is passed through as it is.
 */
export type Timestamp = Date | string;
export const isoString = (t: Timestamp): string => (typeof t === 'string' ? t : t.toISOString());

/**
 * The query compiled, after checking that each selection names its key with `as`: the rows of
 * a compiled query come straight from the driver, keyed by the names in its text, so an
 * unnamed `p.lookingForCollaborators` would arrive as `looking_for_collaborators` while its
 * type says otherwise.
 */
function compileNamed(query: Compilable<object>): CompiledQuery {
  const compiled = query.compile();
  const root = compiled.query;
  const unnamed = SelectQueryNode.is(root) ? (root.selections ?? []).filter((s) => !AliasNode.is(s.selection)) : [];
  if (unnamed.length > 0)
    throw new Error(`A typed read selects ${unnamed.length} column(s) without 'as': ${compiled.sql}`);
  return compiled;
}

/** UUIDs before and after every other: the first page of a list that runs by id, oldest or newest first. */
export const FIRST_ID = '00000000-0000-0000-0000-000000000000';
export const LAST_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The ORMs (by their configuration, which every fork shares) whose hot reads are not prepared. */
const unprepared = new WeakSet<object>();

/** Prepared hot reads on or off for one ORM (DATABASE_PREPARED_STATEMENTS; off for a pooler that cannot keep them). */
export function usePreparedStatements(orm: { config: object }, on: boolean): void {
  if (on) unprepared.delete(orm.config);
  else unprepared.add(orm.config);
}

/** Placeholders stand in for a hot read's values while it is compiled; each marks its parameter's place. */
const PLACEHOLDER = '\u0000hot-read:';
type Slot = { value: string } | { constant: unknown };

/**
 * The statement with its constants (the values its builder wrote: `'public'`, a status, a kind)
 * written into its text as literals, and only its values left as parameters, numbered again.
 * PostgreSQL keeps one plan for a prepared statement only while that plan looks no dearer than
 * one made for each call's values; with its constants as parameters, the kept plan knew none of
 * them and looked dearer for the commonest values, so a statement that costs more to plan than to
 * run (a feed's union) was planned again on every call. A literal is written as PostgreSQL's
 * untyped string, as the driver sends a parameter; a constant that is not a plain string, number
 * or boolean, or whose text has a backslash or NUL, stays a parameter. A literal is read once, when
 * a connection prepares the statement: a constant whose meaning depends on the moment or the
 * session (`'now'`, a time without its zone) belongs in a value, and a bare constant in ORDER BY
 * or GROUP BY would be refused by PostgreSQL as a literal (none of ours is one).
 */
function withConstantsWritten(text: string, slots: Slot[]): { text: string; slots: Slot[] } {
  const literal = (constant: unknown): string | undefined => {
    const raw =
      typeof constant === 'string'
        ? constant
        : (typeof constant === 'number' && Number.isFinite(constant)) || typeof constant === 'boolean'
          ? String(constant)
          : undefined;
    return raw === undefined || raw.includes('\\') || raw.includes('\u0000')
      ? undefined
      : `'${raw.replaceAll("'", "''")}'`;
  };
  const kept: Slot[] = [];
  const written = slots.map((slot) => {
    const lit = 'constant' in slot ? literal(slot.constant) : undefined;
    if (lit !== undefined) return lit;
    kept.push(slot);
    return `$${kept.length}`;
  });
  // Kysely writes each parameter once, $1 to $n in order. Any other `$` and digits (in a literal of
  // the builder's own) would be rewritten too: such a statement is refused, not guessed at.
  const places = (text.match(/\$\d+/g) ?? []).map((p) => Number(p.slice(1)));
  if (places.length !== slots.length || places.some((n, i) => n !== i + 1))
    throw new Error(`A hot read's text has a $ and digits that are not its parameters in order: ${text}`);
  const rewritten = text.replace(/\$(\d+)/g, (_, n: string) => written[Number(n) - 1]!);
  return { text: rewritten, slots: kept };
}

/**
 * A statement with its values bound as parameters, on the request's own connection (its
 * transaction, if any): inside a transaction, a read must see the transaction's own writes.
 */
async function runBound<R>(em: EntityManager, text: string, parameters: readonly unknown[]): Promise<R[]> {
  return (await reads(em).executeQuery<R>(CompiledQuery.raw(text, [...parameters]))).rows;
}

/** A named prepared statement on the pool, the connection given back by hand (a bad value does not drop it). */
async function runPrepared<R>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<R[]> {
  const pool = await em.getConnection(connectionType(em)).getNativeClient();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return (await client.query({ name, text, values })).rows as R[];
  } catch (err) {
    if (isDatabaseUnavailable(err)) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

/** How a hot read is sent (see hotRead). */
type HotReadOptions<V> = {
  prepared?: boolean;
  /**
   * Values a call passes most (a list's default page size): a call passing exactly these runs a
   * statement of its own with them written into its text. PostgreSQL plans a LIMIT it does not
   * know for a tenth of the rows, so a list's kept plan looked dearer than one made for each
   * call's page size, and the list was planned again on every call. Each shape of a filtered read
   * then has two statements on a connection, not one.
   */
  written?: Partial<V>;
};

/**
 * A read whose shape never changes, compiled once: `build` gets placeholders for `names`, the
 * values each call passes (typed as the values they stand for). Its rows are typed by the query
 * itself. With `prepared: false` it is sent with its values bound but unnamed, so PostgreSQL
 * plans it for those values (a search, whose best plan depends on how common its words are).
 */
export function hotRead<N extends string, V extends Record<N, unknown>, Q extends Compilable<object>>(
  names: readonly N[],
  build: (db: Kysely<DB>, values: V) => Q,
  options: HotReadOptions<V> = {},
): HotRead<V, InferResult<Q>> {
  const { written, prepared } = options;
  const general = oneStatement(names, build, prepared);
  const fixed = names.filter((n) => written?.[n] !== undefined);
  if (fixed.length === 0) return general;
  // Only this read's own names: a filtered read's variant without a filter must not get it back.
  const values = Object.fromEntries(fixed.map((n) => [n, written![n]])) as Partial<V>;
  const common = oneStatement(
    names.filter((n) => !fixed.includes(n)),
    (db, v: V) => build(db, { ...v, ...values }),
    prepared,
  );
  const run = (em: EntityManager, v: V) => (fixed.every((n) => v[n] === values[n]) ? common(em, v) : general(em, v));
  // `statement` is the general one's: the text any value can run with.
  return Object.assign(run, { statement: general.statement });
}

function oneStatement<N extends string, V extends Record<N, unknown>, Q extends Compilable<object>>(
  names: readonly N[],
  build: (db: Kysely<DB>, values: V) => Q,
  prepared: boolean | undefined,
): HotRead<V, InferResult<Q>> {
  let compiled: { name: string; text: string; slots: Slot[] } | undefined;
  const compile = (em: EntityManager) => {
    const placeholders = Object.fromEntries(names.map((n) => [n, `${PLACEHOLDER}${n}`])) as unknown as V;
    const query = compileNamed(build(reads(em), placeholders));
    const slots = query.parameters.map(
      (p): Slot =>
        typeof p === 'string' && p.startsWith(PLACEHOLDER) ? { value: p.slice(PLACEHOLDER.length) } : { constant: p },
    );
    // Every value must become a parameter: one written into the text would be the placeholder's, every call.
    if (query.sql.includes(PLACEHOLDER) || names.some((n) => !slots.some((s) => 'value' in s && s.value === n)))
      throw new Error(`A hot read does not bind each of its values (${names.join(', ')}) as a parameter: ${query.sql}`);
    const statement = withConstantsWritten(query.sql, slots);
    // Registered, it goes named in a transaction too (src/db/named-statements.ts).
    const name = prepared === false ? '' : nameStatement(statement.text);
    return { name, ...statement };
  };
  const statement = (em: EntityManager) => {
    compiled ??= compile(em);
    const { text, slots } = compiled;
    return { text, parameters: (values: V) => slots.map((s) => ('value' in s ? values[s.value as N] : s.constant)) };
  };
  const run = async (em: EntityManager, values: V) => {
    const { text, parameters } = statement(em);
    const rows =
      prepared === false || em.isInTransaction() || unprepared.has(em.config)
        ? await runBound(em, text, parameters(values))
        : await runPrepared(em, compiled!.name, text, parameters(values));
    return rows as InferResult<Q>;
  };
  return Object.assign(run, { statement });
}

/**
 * A write made on a hot path with the same shape every time (an outbox row, a delivery's
 * attempt), compiled once as a hot read is: a named prepared statement on the transaction's
 * connection when there is one, else on the pool.
 */
export function hotWrite<N extends string, V extends Record<N, unknown>>(
  names: readonly N[],
  build: (db: Kysely<DB>, values: V) => Compilable<object>,
): (em: EntityManager, values: V) => Promise<void> {
  const statement = hotRead(names, build);
  return async (em, values) => {
    await statement(em, values);
  };
}

/**
 * A read whose shape depends on which of its values are given (optional filters): one hot read
 * per combination of given values, compiled once when first used. A value left undefined is a
 * filter not applied; `build` sees it undefined and leaves its condition out.
 */
export function filteredRead<N extends string, V extends { [K in N]?: unknown }, Q extends Compilable<object>>(
  names: readonly N[],
  build: (db: Kysely<DB>, values: V) => Q,
  options: Pick<HotReadOptions<V>, 'written'> = {},
): (em: EntityManager, values: V) => Promise<InferResult<Q>> {
  const variants = new Map<string, HotRead<V, InferResult<Q>>>();
  return (em, values) => {
    const given = names.filter((n) => values[n] !== undefined);
    const key = given.join(' ');
    let variant = variants.get(key);
    if (!variant) {
      variant = hotRead(given, build, options);
      variants.set(key, variant);
    }
    return variant(em, values);
  };
}

/** A hot read: run it with a request's values; `statement` is its SQL text and parameters (the benchmark's baseline runs the same). */
export type HotRead<V, R> = ((em: EntityManager, values: V) => Promise<R>) & {
  statement: (em: EntityManager) => { text: string; parameters: (values: V) => unknown[] };
};

/** A read built per call (its shape depends on the call: optional filters, lists): bound, not prepared. */
export async function read<Q extends Compilable<object>>(em: EntityManager, query: Q): Promise<InferResult<Q>> {
  const { sql: text, parameters } = compileNamed(query);
  return (await runBound(em, text, parameters)) as InferResult<Q>;
}
