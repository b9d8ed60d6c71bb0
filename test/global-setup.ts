/**
 * Before any file: the server's build brought up to date once (several files start the built
 * server at once, and two builds swapping dist/ together could leave a launcher without it); on
 * PostgreSQL, a database of its own for each worker beside DATABASE_URL's (`<name>_w1`,
 * `<name>_w2`…), made empty here and dropped at the end, so that no two files share tables at
 * the same moment (test/setup.ts points each worker's DATABASE_URL at its own). The embedded
 * database needs nothing: every server has its own in memory.
 */
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { workerDatabase } from './workers.js';

async function onEach(url: string, workers: number, statements: (name: string) => string[]): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (let worker = 1; worker <= workers; worker++)
      for (const statement of statements(new URL(workerDatabase(url, worker)).pathname.slice(1)))
        await admin.query(statement);
  } finally {
    await admin.end();
  }
}

export async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  execFileSync(process.execPath, ['bin/build.mjs'], { stdio: 'inherit' });
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  // As many as run at once, however they were set (TEST_WORKERS, or --maxWorkers).
  const workers = project.globalConfig.maxWorkers;
  const drop = (name: string) => [`drop database if exists "${name}" with (force)`];
  await onEach(url, workers, (name) => [...drop(name), `create database "${name}"`]);
  return () => onEach(url, workers, drop);
}
