import { openDatabase } from './src/db/database.js';
import { reads } from './src/db/reads.js';
const db = await openDatabase({
  databaseUrl: process.env.DATABASE_URL,
  dataDir: '',
  inMemory: true,
  migrate: true,
  poolMax: 1,
});
const em = db.orm.em.fork();
const k = reads(em);
console.log(
  await k
    .selectFrom('Project as p')
    .innerJoin('User as u', 'u.id', 'p.owner')
    .select(['p.lookingForCollaborators', 'u.displayName', 'p.createdAt'])
    .limit(1)
    .execute(),
);
const q = k
  .selectFrom('Project as p')
  .innerJoin('User as u', 'u.id', 'p.owner')
  .select(['p.lookingForCollaborators', 'u.displayName'])
  .limit(1)
  .compile();
console.log(await k.executeQuery(q));
await db.close();
