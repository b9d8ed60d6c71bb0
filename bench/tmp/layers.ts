import { openDatabase } from '../../src/db/database.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '/tmp/x', migrate: false });
const app = createApp({ orm: db.orm, config: { ...loadConfig({} as never) } as never });
const stack = (app as any).router.stack;
console.log(stack.length, stack.map((l: any) => `${l.name}${l.matchers ? '' : ''}`).join(' | '));
await db.close();
