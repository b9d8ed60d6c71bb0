/**
 * Gives back to the pool a connection that died while checked out and that nobody returns.
 *
 * Kysely 0.29's controlled transactions (which MikroORM 7 uses for every transaction) never
 * release their connection when BEGIN, COMMIT or ROLLBACK throws (kysely-org/kysely#1990, open).
 * PostgreSQL going away mid-transaction does exactly that: the COMMIT fails, the ROLLBACK fails,
 * and the connection stays checked out for ever. Ten of them and the pool is empty: the service
 * answers nothing until it is restarted (found by the webhook fault tests: a stop of PostgreSQL
 * during the relay's transaction).
 *
 * Only a connection whose socket has ended is reclaimed, and only after a grace period in which
 * any code that still holds it would have returned it. Through pg-pool's public events
 * (`acquire`, `release`) and the client's `end` event; releasing with an error destroys it.
 */
import type pg from 'pg';

const GRACE_MS = 2_000;

export function reclaimDeadConnections(pool: pg.Pool, onReclaim: () => void = () => undefined): void {
  const out = new WeakSet<pg.PoolClient>();
  const watched = new WeakSet<pg.PoolClient>();
  // Watched at its first checkout (a connection made before this was set up included).
  const watch = (client: pg.PoolClient) => {
    watched.add(client);
    client.once('end', () => {
      const timer = setTimeout(() => {
        if (!out.has(client)) return;
        out.delete(client);
        try {
          client.release(new Error('the connection ended while checked out, and was never returned'));
          onReclaim();
        } catch {
          // Returned meanwhile after all.
        }
      }, GRACE_MS);
      timer.unref();
    });
  };
  pool.on('acquire', (client) => {
    if (!watched.has(client)) watch(client);
    out.add(client);
  });
  pool.on('release', (_err, client) => out.delete(client as pg.PoolClient));
}
