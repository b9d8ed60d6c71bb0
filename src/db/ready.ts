import type { MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { reads } from './reads.js';

/** Whether the database answers a trivial query within two seconds. */
export async function databaseReady(orm: MikroORM, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      reads(orm.em.fork())
        .selectNoFrom(sql.lit(1).as('one'))
        .execute()
        .then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
