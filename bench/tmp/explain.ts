import { openDatabase } from '../../src/db/database.js';
import { search } from '../../src/search/search.service.js';
import { SCOPE_IDS } from '../../src/keys/scopes.js';
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '/tmp/x', migrate: false });
const em = db.orm.em.fork();
const [u] = await em.execute<{ id: string }[]>(`select id from users where username = 'bench'`);
const orig = em.execute.bind(em);
let n = 0;
(em as any).execute = async (sql: string, params: unknown[]) => {
  if (n++ === 1) { const plan = await orig(`explain (analyze, buffers) ${sql}`, params) as any[]; console.log(plan.map((r) => r['QUERY PLAN']).join('\n')); }
  return orig(sql, params);
};
const t = Date.now();
await search(em, { userId: u!.id, via: 'key', scopes: [...SCOPE_IDS] } as never, { q: process.argv[2] ?? 'gears engine', limit: 20 });
console.log('ms', Date.now() - t);
await db.close();
