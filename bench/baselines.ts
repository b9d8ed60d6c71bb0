/**
 * The floors the benchmark compares against, in the same kind of process as the service:
 *   json  — an Express 5 route answering a constant JSON body;
 *   pg    — an Express 5 route reading one project (with its owner) by id with a raw pg query
 *           (a named prepared statement).
 * Usage: node --import tsx bench/baselines.ts json|pg PORT
 */
import express from 'express';
import pg from 'pg';

const [kind, port] = [process.argv[2], Number(process.argv[3])];
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
if (kind === 'json') {
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'world', at: '2026-11-22T00:00:00.000Z' });
  });
} else {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  // A named prepared statement, as the service's hot reads are (src/db/hot-read.ts): parsed
  // once per connection, so the floor is not inflated by a parse and plan the service skips.
  const read = {
    name: 'baseline_project',
    text: `select p.*, u.username, u.display_name from projects p join users u on u.id = p.owner_id where p.id = $1`,
  };
  app.get('/projects/:id', async (req, res) => {
    const { rows } = await pool.query({ ...read, values: [req.params.id] });
    if (!rows[0]) return void res.status(404).json({ status: 404 });
    res.json(rows[0]);
  });
}
app.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
// Exit cleanly on SIGTERM, so `node --cpu-prof` writes its profile of a baseline too.
process.on('SIGTERM', () => process.exit(0));
