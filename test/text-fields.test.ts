/**
 * One-line text (names, titles, labels) as an attacker sent it: white space only, zero-width
 * characters alone, controls and bidi overrides. Each create or update that carries such a
 * value is refused with a 400 naming the field, over REST and over MCP, and writes nothing.
 * Whatever is stored, every list and item that shows it stays readable, to its owner and to
 * everyone else: a row stored before the rule (planted here with SQL) cannot make them fail.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { databaseOfItsOwn, mcpCall, raw, uniqueName, userWithKey, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';
import { openDatabase } from '../src/db/database.js';
import { createKey } from '../src/keys/keys.service.js';
import { createUser, updateProfile } from '../src/users/users.service.js';
import { listOperations, loadContract, type OpenApiDocument, type Operation } from '../src/kernel/contract.js';
import { LINE_PATTERN } from '../src/kernel/text.js';

const contract = loadContract();
const operations = listOperations(contract).filter((o) => o.access.kind === 'scope');

const {
  t,
  users: { stranger },
} = useServer({ users: { stranger: 'all' } });

/**
 * Invisible by Unicode's properties, and stored before (the contract's list named none of them):
 * tags, variation selectors, musical and hieroglyph format controls, shorthand format controls,
 * unassigned code points in and beyond the basic plane.
 */
const BEYOND_THE_LIST = [
  '\u{E0020}',
  '\u{E0100}',
  '\u{1D173}\u{1D17A}',
  '\u{13430}',
  '\u{1BCA0}\u{1BCA3}',
  '\u2065',
  '\uFFF0',
  ' \u{E0001}\u{E007F} ',
  '\u{E0FFF}',
  '\u{3FFFD}',
];

/** Values that show nothing, or that reverse what follows them: none of them is a line. */
const NOT_A_LINE = [
  '',
  ' ',
  '   ',
  '\t',
  '\n',
  '\u3000',
  '\u00a0',
  ' \u00a0\u2003 ',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u2060',
  ' \u200b\u200c ',
  '\u202e',
  '\u202eevil',
  'ok\u202etxt.exe',
  '\u2066isolated\u2069',
  'two\nlines',
  'bell\u0007',
  ...BEYOND_THE_LIST,
];

/** Strings made of those characters, a visible letter among them now and then. */
const notALine = fc.string({
  unit: fc.constantFrom(
    ' ',
    '\t',
    '\n',
    '\u00a0',
    '\u3000',
    '\u200b',
    '\u200d',
    '\ufeff',
    '\u202e',
    '\u2066',
    '\u0007',
    'a',
  ),
  maxLength: 8,
});

const mcp = (token: string, name: string, args: Record<string, unknown>) => mcpCall(t, token, name, args);

const count = async (table: string) =>
  Number((await t.db.orm.em.fork().execute(`select count(*)::int as n from ${table}`))[0]!.n);

type Slot = (string | number)[];
/** Every place in a request body where the contract asks for a line (its `&line` pattern). */
function lineSlots(doc: OpenApiDocument, schema: Schema, at: Slot = []): Slot[] {
  const s = deref(doc, schema);
  if (s.oneOf) return s.oneOf.flatMap((o: Schema) => lineSlots(doc, o, at));
  if (s.pattern === LINE_PATTERN) return [at];
  if (s.items) return lineSlots(doc, s.items, [...at, 0]);
  if (s.properties) return Object.entries(s.properties).flatMap(([k, p]) => lineSlots(doc, p as Schema, [...at, k]));
  return [];
}

describe('names and titles as the attack sent them', () => {
  it('refuses, in every create and update of the contract, a line made only of characters invisible by Unicode properties', async () => {
    const lineWrites = operations.filter((o) => ['post', 'put', 'patch'].includes(o.method));
    let tried = 0;
    for (const op of lineWrites) {
      const item = contract.paths[op.path]![op.method] as {
        requestBody?: { content: Record<string, { schema: Schema }> };
      };
      const schema = item.requestBody?.content['application/json']?.schema;
      const slots = schema ? lineSlots(contract, schema) : [];
      if (!slots.length) continue;
      const { owner, body, params } = await operationRequest(t, contract, op as Operation);
      const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => params[n]!);
      const base = op.operationId === 'createProject' ? { ...body, slug: undefined } : body;
      for (const slot of slots)
        for (const value of BEYOND_THE_LIST) {
          const res = await raw(t, op.method.toUpperCase(), path, {
            token: owner.token,
            body: withValue(base, slot, value),
          });
          const what = `${op.operationId} ${slot.join('.')}=${JSON.stringify(value)} -> ${res.status} ${res.text.slice(0, 200)}`;
          expect(res.status, what).toBe(400);
          expect(res.json.errors, what).toEqual([
            { path: `/body/${slot.join('/')}`, message: expect.stringMatching(/visible character/) },
          ]);
          tried++;
        }
    }
    // Project names and link labels, milestone, post and job titles, company names: creates and updates.
    expect(tried).toBeGreaterThanOrEqual(10 * BEYOND_THE_LIST.length);
  }, 120_000);

  it('refuses the same through every MCP tool that takes a title, and writes nothing', async () => {
    const ada = await userWithKey(t);
    const project = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'Engine' } });
    const milestone = await raw(t, 'POST', `/projects/${project.json.id}/milestones`, {
      token: ada.token,
      body: { title: 'First' },
    });
    const before = [await count('milestones'), await count('posts')];
    for (const title of BEYOND_THE_LIST)
      for (const [tool, args] of [
        ['create_milestone', { projectId: project.json.id, title }],
        ['update_milestone', { projectId: project.json.id, milestoneId: milestone.json.id, title }],
        ['create_build_log', { projectId: project.json.id, title, body: 'shipped' }],
      ] as const) {
        const res = await mcp(ada.token, tool, args);
        const text = JSON.stringify(res.json);
        expect(res.json.result?.isError, `${tool} ${JSON.stringify(title)}: ${text}`).toBe(true);
        expect(res.json.result.content[0].text).toMatch(/visible character.* at title\./);
      }
    expect([await count('milestones'), await count('posts')]).toEqual(before);
    const read = await raw(t, 'GET', `/projects/${project.json.id}/milestones/${milestone.json.id}`, {
      token: ada.token,
    });
    expect(read.json.title).toBe('First');
  });

  it('refuses a project name of white space only, on create and on update, and writes nothing', async () => {
    const ada = await userWithKey(t);
    const before = await count('projects');
    for (const name of ['   ', '\t', '\u3000', '\u00a0']) {
      const res = await raw(t, 'POST', '/projects', { token: ada.token, body: { name } });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json.errors).toEqual([{ path: '/body/name', message: expect.stringMatching(/visible character/) }]);
    }
    expect(await count('projects')).toBe(before);
    const made = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: '  Analytical Engine  ' } });
    expect(made.status).toBe(201);
    expect(made.json.name).toBe('Analytical Engine');
    const patched = await raw(t, 'PATCH', `/projects/${made.json.id}`, { token: ada.token, body: { name: ' ' } });
    expect(patched.status).toBe(400);
    expect(patched.json.errors[0].path).toBe('/body/name');
    const read = await raw(t, 'GET', `/projects/${made.json.id}`, { token: stranger.token });
    expect(read.status).toBe(200);
    expect(read.json.name).toBe('Analytical Engine');
    for (const path of ['/projects', `/users/${ada.user.username}/projects`]) {
      expect((await raw(t, 'GET', path, { token: stranger.token })).status, path).toBe(200);
    }
  });

  it('refuses the same over MCP, with the field named, and writes nothing', async () => {
    const ada = await userWithKey(t);
    const project = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'Engine' } });
    const before = await count('milestones');
    for (const title of ['   ', '\u200b', '\u202eevil']) {
      const res = await mcp(ada.token, 'create_milestone', { projectId: project.json.id, title });
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.json);
      expect(res.json.result?.isError ?? res.json.error !== undefined, text).toBe(true);
      expect(text).toMatch(/title/);
      expect(text).toMatch(/visible character|bidi-override/);
    }
    expect(await count('milestones')).toBe(before);
    const listed = await mcp(ada.token, 'list_my_projects', {});
    expect(listed.json.result.isError).toBeFalsy();
  });
});

type Schema = Record<string, any>;
const deref = (doc: OpenApiDocument, s: Schema): Schema =>
  typeof s?.$ref === 'string'
    ? deref(
        doc,
        s.$ref
          .slice(2)
          .split('/')
          .reduce((n: any, k: string) => n[k], doc),
      )
    : s;

/** Every place in a request body where a string goes, as a path of keys (an array's first item for an array). */
function stringSlots(doc: OpenApiDocument, schema: Schema, at: (string | number)[] = []): (string | number)[][] {
  const s = deref(doc, schema);
  const types = ([] as string[]).concat(s.type ?? []);
  if (s.oneOf) return s.oneOf.flatMap((o: Schema) => stringSlots(doc, o, at));
  if (types.includes('string') && !s.enum && !s.format) return [at];
  if (types.includes('array') && s.items) return stringSlots(doc, s.items, [...at, 0]);
  if (types.includes('object') && s.properties)
    return Object.entries(s.properties).flatMap(([k, p]) => stringSlots(doc, p as Schema, [...at, k]));
  return [];
}

function withValue(body: any, slot: (string | number)[], value: string): any {
  const copy = structuredClone(body);
  let node = copy;
  for (const [i, key] of slot.entries()) {
    if (i === slot.length - 1) node[key] = value;
    else {
      node[key] ??= typeof slot[i + 1] === 'number' ? [] : {};
      if (typeof slot[i + 1] === 'number' && node[key].length === 0)
        node[key].push({ label: 'x', url: 'https://x.example' });
      node = node[key];
    }
  }
  return copy;
}

const writes = operations.filter((o) => ['post', 'put', 'patch'].includes(o.method));
const reads = operations.filter((o) => o.method === 'get' && o.operationId !== 'getMediaContent');

describe('every create and update, for each string field (fast-check)', () => {
  for (const op of writes) {
    const item = contract.paths[op.path]![op.method] as {
      requestBody?: { content: Record<string, { schema: Schema }> };
    };
    const schema = item.requestBody?.content['application/json']?.schema;
    const slots = schema ? stringSlots(contract, schema) : [];
    if (slots.length === 0) continue;
    it(`${op.operationId}: a 4xx or a readable row, for owner and stranger alike, never a 500`, async () => {
      const { owner, body, params } = await operationRequest(t, contract, op as Operation);
      const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, n: string) => params[n]!);
      const path = fill(op.path);
      // A slug is unique per owner: left out, each create gets its own, and is judged on the field under test.
      const base = op.operationId === 'createProject' ? { ...body, slug: undefined } : body;
      const examples = slots.flatMap((slot) => NOT_A_LINE.map((v): [typeof slot, string] => [slot, v]));
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...slots), notALine, async (slot, value) => {
          const sent = withValue(base, slot, value);
          const res = await raw(t, op.method.toUpperCase(), path, { token: owner.token, body: sent });
          const what = `${op.operationId} ${slot.join('.')}=${JSON.stringify(value)} -> ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          if (res.status === 400) expect(res.json.errors?.length ?? 1, what).toBeGreaterThan(0);
        }),
        // Every field with every listed value first, then values fast-check makes from the same characters.
        { examples, numRuns: examples.length + 20 },
      );
      for (const read of reads) {
        const readPath = fill(read.path) + (read.operationId === 'search' ? '?q=x' : '');
        for (const who of [owner, stranger]) {
          const res = await raw(t, 'GET', readPath, { token: who.token });
          expect(res.status, `${read.operationId} ${readPath} -> ${res.text.slice(0, 300)}`).toBeLessThan(500);
        }
      }
      for (const [tool, args] of [
        ['list_my_projects', {}],
        ['get_roadmap', { projectId: params.projectId }],
        ['list_build_logs', { projectId: params.projectId }],
      ] as const) {
        const res = await mcp(owner.token, tool, args);
        expect(res.json.result?.isError, `${tool}: ${JSON.stringify(res.json).slice(0, 300)}`).toBeFalsy();
      }
    }, 120_000);
  }
});

describe('a row stored before the rule', () => {
  it('cannot make a list or an item fail, for its owner or anyone else', async () => {
    const { owner, params } = await operationRequest(t, contract, operations[0]!);
    const em = t.db.orm.em.fork();
    // Planted as an older server, or a hand-made SQL fix, could have stored them.
    await em.execute(`update projects set name = '', links = ? where id = ?`, [
      JSON.stringify([{ label: ' \u200b', url: 'https://x.example' }]),
      params.projectId,
    ]);
    await em.execute(`update milestones set title = '\t' where id = ?`, [params.milestoneId]);
    await em.execute(`update posts set title = '\u202e' where id = ?`, [params.postId]);
    await em.execute(`update jobs set title = ' ', company = '\u3000' where id = ?`, [params.jobId]);
    for (const path of [
      '/projects',
      `/projects/${params.projectId}`,
      `/users/${owner.user.username}/projects`,
      `/projects/${params.projectId}/milestones`,
      `/projects/${params.projectId}/build-logs`,
      `/posts/${params.postId}`,
      '/posts',
      `/jobs/${params.jobId}`,
      '/jobs',
    ]) {
      for (const who of [owner, stranger]) {
        const res = await raw(t, 'GET', path, { token: who.token });
        expect(res.status, `${path} -> ${res.text.slice(0, 300)}`).toBe(200);
      }
    }
    const project = await raw(t, 'GET', `/projects/${params.projectId}`, { token: owner.token });
    expect(project.json.name).toBe(project.json.slug);
    expect(project.json.links[0].label).toBe('Link');
    const listed = await mcp(owner.token, 'list_my_projects', {});
    expect(listed.json.result.isError).toBeFalsy();
    expect(JSON.stringify(listed.json.result.structuredContent)).toContain(project.json.slug);
  });
});

describe('the services behind the web forms take the same rule', () => {
  it('refuses a key name, a display name or a location that is not a line', async () => {
    const ada = await userWithKey(t);
    for (const name of ['  ', '\u200b', 'deploy\u202e']) {
      await expect(
        createKey(t.db.orm.em.fork(), { userId: ada.user.id, name, scopes: ['projects.read'], expiresInDays: 1 }),
        JSON.stringify(name),
      ).rejects.toMatchObject({ status: 400 });
    }
    const profile = { displayName: 'Ada', bio: '', location: '', website: '', skills: [] };
    for (const change of [{ displayName: '\u200b' }, { displayName: 'Ada\u202e' }, { location: 'Lon\ndon' }]) {
      await expect(
        updateProfile(t.db.orm.em.fork(), ada.user.id, { ...profile, ...change }),
        JSON.stringify(change),
      ).rejects.toMatchObject({ status: 400 });
    }
    const username = uniqueName();
    await expect(
      createUser(t.db.orm.em.fork(), { username, email: `${username}@example.test`, displayName: 'gnihton\u202e' }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('the repair migration', () => {
  /** A database of its own, migrated up to the one before the repair: PostgreSQL's own, or a new embedded one. */
  async function databaseBeforeRepair() {
    const { databaseUrl, drop } = await databaseOfItsOwn('shipyard_lines');
    const db = await openDatabase({ databaseUrl, dataDir: '', inMemory: true, migrate: false });
    await db.orm.migrator.up({ to: 'Migration20261126000000_array_null_text' });
    const close = async () => {
      await db.close();
      await drop();
    };
    return { db, close };
  }

  it('repairs each kind of bad value the way the presenters show it, and leaves good ones alone', async () => {
    const { db, close } = await databaseBeforeRepair();
    try {
      const em = db.orm.em.fork();
      const now = new Date().toISOString();
      await em.execute(
        `insert into users (id, username, email, display_name, created_at) values
          ('00000000-0000-7000-8000-000000000001', 'ada', 'ada@example.test', ' \u200b ', ?),
          ('00000000-0000-7000-8000-000000000002', 'bob', 'bob@example.test', 'Bob  Builder', ?)`,
        [now, now],
      );
      const links = JSON.stringify([
        { label: '\t', url: 'https://a.example' },
        { label: 'Docs', url: 'https://b.example' },
      ]);
      await em.execute(
        `insert into projects (id, owner_id, name, slug, tagline, links, created_at, updated_at) values
          ('00000000-0000-7000-8000-0000000000a1', '00000000-0000-7000-8000-000000000001', '', 'engine', 'gear\u202eraeg', ?, ?, ?),
          ('00000000-0000-7000-8000-0000000000a2', '00000000-0000-7000-8000-000000000001', ' Mill\u2066 ', 'mill', '', '[]', ?, ?),
          ('00000000-0000-7000-8000-0000000000a3', '00000000-0000-7000-8000-000000000002', 'Fine  name', 'fine', 'ok', '[]', ?, ?)`,
        [links, now, now, now, now, now, now],
      );
      await em.execute(
        `insert into milestones (id, project_id, title, position, created_at, updated_at) values
          ('00000000-0000-7000-8000-0000000000b1', '00000000-0000-7000-8000-0000000000a1', '\u3000', 1, ?, ?)`,
        [now, now],
      );
      await db.orm.migrator.up();
      const rows = async (sql: string) => await db.orm.em.fork().execute(sql);
      expect(await rows(`select slug, name, tagline, links from projects order by slug`)).toEqual([
        {
          slug: 'engine',
          name: 'engine',
          tagline: 'gear raeg',
          links: [
            { label: 'Link', url: 'https://a.example' },
            { label: 'Docs', url: 'https://b.example' },
          ],
        },
        { slug: 'fine', name: 'Fine  name', tagline: 'ok', links: [] },
        { slug: 'mill', name: 'Mill', tagline: '', links: [] },
      ]);
      expect(await rows(`select username, display_name from users order by username`)).toEqual([
        { username: 'ada', display_name: 'ada' },
        { username: 'bob', display_name: 'Bob  Builder' },
      ]);
      expect(await rows(`select title from milestones`)).toEqual([{ title: 'Untitled milestone' }]);
    } finally {
      await close();
    }
  });
});
