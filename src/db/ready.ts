import type { MikroORM } from '@mikro-orm/postgresql';

/** Whether the database answers `select 1` within two seconds. */
export async function databaseReady(orm: MikroORM, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      orm.em
        .fork()
        .execute('select 1')
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
