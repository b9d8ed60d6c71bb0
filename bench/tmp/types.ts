import { openDatabase } from '../../src/db/database.js';
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '/tmp/x', migrate: false });
const em = db.orm.em.fork();
const [r] = await em.execute<any[]>(`select created_at, tags, links, looking_for_collaborators from projects limit 1`);
console.log(r, typeof r.created_at, r.created_at?.constructor?.name);
await db.close();
