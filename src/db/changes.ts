/**
 * PostgreSQL's LISTEN/NOTIFY as a feed of change notices, on either database.
 *
 * PostgreSQL: one connection of its own per subscription (pooled connections come and go), which
 * LISTENs and reconnects by itself when it is dropped; while it is down the subscriber is told
 * so, since notices sent meanwhile are lost.
 *
 * Embedded: the database is one session inside this process, served to the ORM's pool over one
 * connection, and a notice goes to the connection whose transaction sent it. Only this process
 * can open the database, so every change is made through that connection: the subscription
 * LISTENs on it and reads the notices it receives (and on any connection the pool opens later).
 */
import pg from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';

type Subscriber = {
  /** A notice's payload. */
  onNotice: (payload: string) => void;
  /** Whether notices are being received: false while a dropped connection is being made again. */
  onLive: (live: boolean) => void;
};
export type Unsubscribe = () => void;
export type ChangeFeed = { subscribe: (channel: string, subscriber: Subscriber) => Unsubscribe };

const CHANNEL = /^[a-z_][a-z0-9_]*$/;
const RETRY_MS = [250, 500, 1000, 2000, 5000];

/** Listens on `channel` (a checked name: CHANNEL) on this connection; Kysely has no LISTEN. */
const listen = (client: pg.ClientBase, channel: string) => client.query(`listen "${channel}"`);

export function postgresFeed(url: string): ChangeFeed {
  return {
    subscribe(channel, { onNotice, onLive }) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      let client: pg.Client | undefined;
      let stopped = false;
      let failures = 0;
      let timer: NodeJS.Timeout | undefined;
      const retry = () => {
        if (stopped || timer) return;
        onLive(false);
        timer = setTimeout(
          () => {
            timer = undefined;
            void connect();
          },
          RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)],
        );
        timer.unref();
      };
      const connect = async () => {
        const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
        client = c;
        c.on('error', () => {
          void c.end().catch(() => undefined);
          retry();
        });
        c.on('end', retry);
        c.on('notification', (n) => {
          if (n.channel === channel && n.payload !== undefined) onNotice(n.payload);
        });
        try {
          await c.connect();
          await listen(c, channel);
          if (stopped) return void (await c.end().catch(() => undefined));
          failures = 0;
          onLive(true);
        } catch {
          void c.end().catch(() => undefined);
          retry();
        }
      };
      void connect();
      return () => {
        stopped = true;
        clearTimeout(timer);
        void client?.end().catch(() => undefined);
      };
    },
  };
}

export function embeddedFeed(orm: MikroORM): ChangeFeed {
  return {
    subscribe(channel, { onNotice, onLive }) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      let stopped = false;
      const listening = new Set<pg.ClientBase>();
      const onNotification = (n: pg.Notification) => {
        if (!stopped && n.channel === channel && n.payload !== undefined) onNotice(n.payload);
      };
      const attach = (client: pg.ClientBase) => {
        if (listening.has(client)) return;
        listening.add(client);
        client.on('notification', onNotification);
      };
      let pool: pg.Pool | undefined;
      const onConnect = (client: pg.PoolClient) => {
        attach(client);
        listen(client, channel).catch(() => undefined);
      };
      void (async () => {
        pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
        pool.on('connect', onConnect);
        const client = await pool.connect();
        try {
          attach(client);
          await listen(client, channel);
        } finally {
          client.release();
        }
        if (!stopped) onLive(true);
      })().catch(() => onLive(false));
      return () => {
        stopped = true;
        pool?.off('connect', onConnect);
        for (const client of listening) client.off('notification', onNotification);
        listening.clear();
      };
    },
  };
}
