/**
 * The floors the benchmark compares against, in the same kind of process as the service:
 *   json   — an Express 5 route answering a constant JSON body;
 *   pg     — an Express 5 route reading one project (with its owner) by id with a raw pg query
 *            (a named prepared statement, as the service's hot reads are);
 *   search — an Express 5 route running the service's own search statement (compiled from
 *            src/search/search.queries.ts for the bench user, every kind) through raw pg, bound
 *            but unnamed as the service sends it: the database's own work, and what Express and
 *            pg add to it;
 *   write  — an Express 5 route appending a milestone to a project's roadmap as the service does:
 *            in one transaction, under the project's row lock, at the next position.
 * Usage: node --import tsx bench/baselines.ts json|pg|search|write PORT
 *   (search needs BENCH_USER_ID, the bench user's id.)
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const [kind, port] = [process.argv[2], Number(process.argv[3])];
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
const pool = () => new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

if (kind === 'json') {
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'world', at: '2026-11-22T00:00:00.000Z' });
  });
} else if (kind === 'pg') {
  const db = pool();
  // Parsed once per connection, so the floor is not inflated by a parse and plan the service skips.
  const read = {
    name: 'baseline_project',
    text: `select p.*, u.username, u.display_name from projects p join users u on u.id = p.owner_id where p.id = $1`,
  };
  app.get('/projects/:id', async (req, res) => {
    const { rows } = await db.query({ ...read, values: [req.params.id] });
    if (!rows[0]) return void res.status(404).json({ status: 404 });
    res.json(rows[0]);
  });
} else if (kind === 'search') {
  const userId = process.env.BENCH_USER_ID;
  if (!userId) throw new Error('the search baseline needs BENCH_USER_ID');
  // The statement is compiled by the service's own query module, on an ORM opened only for that.
  const { openDatabase } = await import('../src/db/database.js');
  const { searchStatement } = await import('../src/search/search.queries.js');
  const orm = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '', migrate: false, poolMax: 1 });
  const statement = searchStatement(orm.orm.em.fork(), ['post', 'project', 'job', 'user']);
  await orm.close();
  const db = pool();
  app.get('/search', async (req, res) => {
    const q = String(req.query.q ?? '');
    const values = statement.parameters({ q, userId, limit: 21, offset: 0 });
    const { rows } = await db.query({ text: statement.text, values });
    res.json({ items: rows.slice(0, 20) });
  });
} else if (kind === 'write') {
  const db = pool();
  app.use(express.json());
  app.post('/projects/:id/milestones', async (req, res) => {
    const client = await db.connect();
    try {
      await client.query('begin');
      const locked = await client.query('select id from projects where id = $1 for update', [req.params.id]);
      if (!locked.rows[0]) {
        await client.query('rollback');
        return void res.status(404).json({ status: 404 });
      }
      const count = await client.query('select coalesce(max(position), 0) as n from milestones where project_id = $1', [
        req.params.id,
      ]);
      const { rows } = await client.query(
        `insert into milestones (id, project_id, title, status, position, created_at, updated_at)
         values ($1, $2, $3, 'planned', $4, now(), now()) returning *`,
        [randomUUID(), req.params.id, String(req.body?.title ?? ''), Number(count.rows[0].n) + 1],
      );
      await client.query('commit');
      res.status(201).json(rows[0]);
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      res.status(500).json({ status: 500, detail: String(err) });
    } finally {
      client.release();
    }
  });
} else {
  throw new Error(`unknown baseline: ${kind}`);
}
app.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
// Exit cleanly on SIGTERM, so `node --cpu-prof` writes its profile of a baseline too.
process.on('SIGTERM', () => process.exit(0));
