/**
 * Test files run on several workers at once (vitest.config.ts). On PostgreSQL each worker gets a
 * database of its own beside DATABASE_URL's (`<name>_w1`, `<name>_w2`…), made empty here and
 * dropped at the end, so that no two files share tables at the same moment; test/setup.ts points
 * each worker's DATABASE_URL at its own. The embedded database needs nothing: every server has
 * its own in memory.
 */
import pg from 'pg';
import { TEST_WORKERS, workerDatabase } from './workers.js';

async function onEach(url: string, statements: (name: string) => string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (let worker = 1; worker <= TEST_WORKERS; worker++)
      for (const statement of statements(new URL(workerDatabase(url, worker)).pathname.slice(1)))
        await admin.query(statement);
  } finally {
    await admin.end();
  }
}

export async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  const drop = (name: string) => [`drop database if exists "${name}" with (force)`];
  await onEach(url, (name) => [...drop(name), `create database "${name}"`]);
  return () => onEach(url, drop);
}
