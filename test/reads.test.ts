/**
 * Typed reads (src/db/reads.ts): the DB type agrees with the entities, a hot read runs as one
 * named prepared statement (on the ORM's pool; in a transaction on its connection; unprepared
 * when DATABASE_PREPARED_STATEMENTS is false), a selection without `as` is refused, and `iso`
 * writes what Date#toISOString does. Each database here has one connection, so the statements it
 * prepared are the ones `pg_prepared_statements` lists.
 */
import { KeySighting } from '../src/keys/key-sighting.entity.js';
import { SecurityEvent } from '../src/security-log/security-event.entity.js';
import { WebhookAttempt, WebhookDelivery, WebhookSubscription } from '../src/webhooks/webhook.entity.js';
import { WebhookEvent } from '../src/outbox/event.entity.js';
import { FeedMark } from '../src/feeds/feed-mark.entity.js';
import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { type DB, filteredRead, hotRead, reads } from '../src/db/reads.js';
import { loadConfig } from '../src/config.js';
import { User } from '../src/users/user.entity.js';
import { OAuthClient } from '../src/oauth/oauth-client.entity.js';
import { OAuthGrant } from '../src/oauth/oauth-grant.entity.js';
import { ApiKey } from '../src/keys/api-key.entity.js';
import { Project, ProjectMember } from '../src/projects/project.entity.js';
import { Milestone } from '../src/milestones/milestone.entity.js';
import { RoadmapWalk } from '../src/milestones/roadmap-walk.entity.js';
import { MilestoneDueDateChange } from '../src/milestones/due-date-change.entity.js';
import { Post } from '../src/posts/post.entity.js';
import { Comment } from '../src/comments/comment.entity.js';
import { Media } from '../src/media/media.entity.js';
import { Reaction } from '../src/reactions/reaction.entity.js';
import { Job } from '../src/jobs/job.entity.js';
import { GithubAccount, GithubRepo } from '../src/github/github.entity.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency.entity.js';
import { Session } from '../src/sessions/session.entity.js';
import { KnownDevice } from '../src/sessions/known-device.entity.js';
import { entities } from '../src/db/entities.js';
import { profileById } from '../src/users/users.queries.js';

const open = (preparedStatements?: boolean) =>
  openDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: '',
    inMemory: true,
    migrate: true,
    poolMax: 1,
    preparedStatements,
  });

let prepared: Database;
let unprepared: Database;
beforeAll(async () => {
  [prepared, unprepared] = [await open(), await open(false)];
});
afterAll(async () => {
  await prepared?.close();
  await unprepared?.close();
});

// A statement no other test runs, so the statement it prepares is this test's own.
const probe = hotRead(['n'], (db, v: { n: number }) =>
  db.selectNoFrom([sql<number>`${v.n}::int + 1`.as('n'), sql.lit('reads.test').as('source')]),
);
// Another, run only inside transactions.
const probeInTransaction = hotRead(['n'], (db, v: { n: number }) =>
  db.selectNoFrom([sql<number>`${v.n}::int * 2`.as('n'), sql.lit('reads.test, in a transaction').as('source')]),
);
/** How many of this file's statements `em`'s connection has prepared (`em` may be a transaction's). */
const preparedOn = async (em: EntityManager, source = 'reads.test') =>
  (
    await reads(em)
      .selectFrom(sql<{ name: string; statement: string }>`pg_prepared_statements`.as('s'))
      .select('s.name as name')
      .where('s.name', 'like', 'hot\\_%')
      .where('s.statement', 'like', `%'${source}'%`)
      .execute()
  ).length;
const preparedHere = (db: Database) => preparedOn(db.orm.em.fork());

/** An entity's columns: its own properties (none of the entities here has a collection). */
type Columns<E> = Exclude<keyof E, symbol | number>;
const tables = {
  User,
  ApiKey,
  KeySighting,
  SecurityEvent,
  Project,
  ProjectMember,
  Milestone,
  RoadmapWalk,
  MilestoneDueDateChange,
  Post,
  Comment,
  Media,
  Reaction,
  Job,
  GithubAccount,
  GithubRepo,
  IdempotencyRecord,
  Session,
  KnownDevice,
  OAuthClient,
  OAuthGrant,
  WebhookSubscription,
  WebhookEvent,
  WebhookDelivery,
  WebhookAttempt,
  FeedMark,
};

describe('typed reads', () => {
  it('know every column of every entity, and no column the entity lacks', () => {
    type Agrees = {
      [N in keyof typeof tables]: [Columns<InstanceType<(typeof tables)[N]>>] extends [keyof DB[N]]
        ? [keyof DB[N]] extends [Columns<InstanceType<(typeof tables)[N]>>]
          ? true
          : false
        : false;
    };
    expectTypeOf<Agrees>().toEqualTypeOf<{ [N in keyof typeof tables]: true }>();
    // And the table list is the ORM's.
    expect(Object.values(tables).sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      [...entities].sort((a, b) => a.name.localeCompare(b.name)),
    );
  });

  it('run a hot read as one named prepared statement, reused on the next call', async () => {
    const em = prepared.orm.em.fork();
    expect(await probe(em, { n: 41 })).toEqual([{ n: 42, source: 'reads.test' }]);
    expect(await probe(em, { n: 1 })).toEqual([{ n: 2, source: 'reads.test' }]);
    expect(await preparedHere(prepared)).toBe(1);
  });

  it("run inside a transaction on the transaction's connection, and see its writes", async () => {
    const seen = await prepared.orm.em
      .fork()
      .transactional(async (tem) => {
        const user = tem.create(User, { username: 'reads-probe', email: 'reads-probe@example.com', displayName: 'R' });
        await tem.flush();
        // With one connection, a read outside the transaction would wait for it until the acquire timeout.
        const [row] = await profileById(tem, { id: user.id });
        throw Object.assign(new Error('roll back'), { row, user });
      })
      .catch((err: { row: { createdAt: string; username: string }; user: User }) => err);
    expect(seen.row.username).toBe('reads-probe');
    // `iso` writes what the API shows for an entity's Date.
    expect(seen.row.createdAt).toBe(seen.user.createdAt.toISOString());
  });

  it("run as the same named statement on a transaction's connection (a write's hot statements under its locks)", async () => {
    const source = 'reads.test, in a transaction';
    const [before, after] = await prepared.orm.em.fork().transactional(async (tem) => {
      const was = await preparedOn(tem, source);
      expect(await probeInTransaction(tem, { n: 21 })).toEqual([{ n: 42, source }]);
      return [was, await preparedOn(tem, source)];
    });
    expect([before, after]).toEqual([0, 1]);
    // Reused, not prepared again, on the next transaction.
    expect(await prepared.orm.em.fork().transactional((tem) => probeInTransaction(tem, { n: 1 }))).toEqual([
      { n: 2, source },
    ]);
    expect(await preparedOn(prepared.orm.em.fork(), source)).toBe(1);
  });

  it('are not prepared when DATABASE_PREPARED_STATEMENTS is false', async () => {
    const em = unprepared.orm.em.fork();
    expect(await probe(em, { n: 41 })).toEqual([{ n: 42, source: 'reads.test' }]);
    expect(await em.transactional((tem) => probeInTransaction(tem, { n: 1 }))).toHaveLength(1);
    expect(await preparedHere(unprepared)).toBe(0);
    expect(await preparedOn(em, 'reads.test, in a transaction')).toBe(0);
  });

  it("write their builder's constants into the text, so that the plan PostgreSQL keeps knows them", async () => {
    // A constant is a value the builder wrote (a kind, a status); a quote in it is doubled, and one
    // with a backslash stays a parameter (its meaning in a literal depends on a server setting).
    const source = 'reads.test, constants';
    const withConstants = hotRead(['n'], (db, v: { n: number }) =>
      db.selectNoFrom([
        sql<number>`${v.n}::int + ${2}`.as('n'),
        sql<string>`${"it's"}::text`.as('quoted'),
        sql<string>`${'a\\b'}::text`.as('slashed'),
        sql<boolean>`${true}::boolean`.as('yes'),
        sql.lit(source).as('source'),
      ]),
    );
    const em = prepared.orm.em.fork();
    expect(await withConstants(em, { n: 40 })).toEqual([{ n: 42, quoted: "it's", slashed: 'a\\b', yes: true, source }]);
    const [statement] = await reads(em)
      .selectFrom(sql<{ name: string; statement: string; parameter_types: string }>`pg_prepared_statements`.as('s'))
      .select(['s.statement as text', sql<string>`s.parameter_types::text`.as('types')])
      .where('s.statement', 'like', `%'${source}'%`)
      .execute();
    expect(statement?.text).toContain(`'2'`);
    expect(statement?.text).toContain(`'it''s'`);
    expect(statement?.text).toContain(`'true'`);
    // The value, and the constant kept as a parameter: numbered again from $1.
    expect(statement?.text).toMatch(/\$1::int \+ '2'/);
    expect(statement?.text).toMatch(/\$2::text as "slashed"/);
    expect(statement?.types).toBe('{integer,text}');
  });

  it('run the commonest values (a default page size) as a statement of their own, with them written in', async () => {
    const source = 'reads.test, written';
    const page = hotRead(
      ['n', 'limit'],
      (db, v: { n: number; limit: number }) =>
        db
          .selectFrom(sql<{ i: number }>`(select generate_series(1, 100) as i)`.as('s'))
          .select([sql<number>`s.i + ${v.n}::int`.as('i'), sql.lit(source).as('source')])
          .orderBy('s.i')
          .limit(v.limit),
      { written: { limit: 3 } },
    );
    const em = prepared.orm.em.fork();
    const statements = () =>
      reads(em)
        .selectFrom(sql<{ statement: string; parameter_types: string }>`pg_prepared_statements`.as('s'))
        .select([sql<string>`s.parameter_types::text`.as('types'), 's.statement as text'])
        .where('s.statement', 'like', `%'${source}'%`)
        .execute();
    expect((await page(em, { n: 10, limit: 3 })).map((r) => r.i)).toEqual([11, 12, 13]);
    expect(await statements()).toEqual([{ types: '{integer}', text: expect.stringMatching(/limit '3'$/) }]);
    // Any other page size: the statement with the size as a parameter.
    expect((await page(em, { n: 10, limit: 2 })).map((r) => r.i)).toEqual([11, 12]);
    expect((await statements()).map((s) => s.types).sort()).toEqual(['{integer,bigint}', '{integer}']);
  });

  it('run the commonest values written in for a filtered read too, only in the variants that have them', async () => {
    const source = 'reads.test, filtered';
    const page = filteredRead(
      ['above', 'limit'],
      (db, v: { above?: number; limit: number }) => {
        let query = db
          .selectFrom(sql<{ i: number }>`(select generate_series(1, 100) as i)`.as('s'))
          .select([sql<number>`s.i`.as('i'), sql.lit(source).as('source')]);
        if (v.above !== undefined) query = query.where(sql<boolean>`s.i > ${v.above}::int`);
        return query.orderBy('s.i').limit(v.limit);
      },
      { written: { limit: 2 } },
    );
    const em = prepared.orm.em.fork();
    expect((await page(em, { limit: 2 })).map((r) => r.i)).toEqual([1, 2]);
    expect((await page(em, { above: 50, limit: 2 })).map((r) => r.i)).toEqual([51, 52]);
    expect((await page(em, { above: 50, limit: 3 })).map((r) => r.i)).toEqual([51, 52, 53]);
    const texts = (
      await reads(em)
        .selectFrom(sql<{ statement: string }>`pg_prepared_statements`.as('s'))
        .select('s.statement as text')
        .where('s.statement', 'like', `%'${source}'%`)
        .execute()
    ).map((s) => s.text);
    expect(texts.filter((t) => t.endsWith(`limit '2'`))).toHaveLength(2);
    expect(texts.filter((t) => t.endsWith('limit $2'))).toHaveLength(1);
  });

  it('refuse a hot read whose text has a $ and digits that are not its parameters (they would be rewritten)', async () => {
    const priced = hotRead([], (db) => db.selectNoFrom(sql.lit('US$5').as('price')));
    await expect(priced(prepared.orm.em.fork(), {})).rejects.toThrow(/not its parameters in order/);
  });

  it("refuse a selection without 'as' (its key would be the column's name, not the type's)", async () => {
    const unnamed = hotRead([], (db) => db.selectFrom('User as u').select('u.displayName'));
    await expect(unnamed(prepared.orm.em.fork(), {})).rejects.toThrow(/without 'as'/);
  });

  it('refuse a hot read that writes a value into its text instead of binding it', async () => {
    const inlined = hotRead(['name'], (db, v: { name: string }) => db.selectNoFrom(sql.lit(v.name).as('name')));
    await expect(inlined(prepared.orm.em.fork(), { name: 'x' })).rejects.toThrow(/does not bind each of its values/);
  });

  it('DATABASE_PREPARED_STATEMENTS is auto by default (found out at start) and must be true, false or auto', () => {
    expect(loadConfig({}).databasePreparedStatements).toBeUndefined();
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'auto' }).databasePreparedStatements).toBeUndefined();
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements).toBe(true);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(
      /DATABASE_PREPARED_STATEMENTS must be true, false or auto, got 'off'/,
    );
  });
});
