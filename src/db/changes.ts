/**
 * PostgreSQL's LISTEN/NOTIFY as a feed of change notices, on either database.
 *
 * PostgreSQL: one connection of its own for every subscription of the process (pooled
 * connections come and go), which LISTENs and reconnects by itself when it is dropped or goes
 * silent (a heartbeat it sends itself does not come back); while it is down the subscribers are
 * told so, since notices sent meanwhile are lost.
 *
 * Embedded: the database is one session inside this process, served to the ORM's pool over one
 * connection, and a notice goes to the connection whose transaction sent it. Only this process
 * can open the database, so every change is made through that connection: the subscription
 * LISTENs on it and reads the notices it receives (and on any connection the pool opens later).
 */
import { randomBytes } from 'node:crypto';
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

/** How often the listening connection sends itself a heartbeat, and how long one may take to come back. */
const HEARTBEAT_MS = 200;
const SILENT_MS = 600;

/**
 * LISTEN on PostgreSQL for every subscription of this process, on one connection of its own (a
 * session: the direct URL, past any transaction pooler), watched. Besides the subscribed
 * channels it LISTENs on a channel of its own, on which it sends itself a numbered heartbeat every
 * HEARTBEAT_MS, on the same connection (so heartbeats never reach another instance, or a
 * subscriber). It counts as live only while its heartbeats come back: one not back SILENT_MS after
 * it was sent means the connection has gone silent (its backend stalled, a network path that drops
 * packets without closing), and every subscriber is told it is not live (the key cache then trusts
 * nothing) while the connection is made again. The check runs after the event loop has read what
 * arrived, and times each heartbeat from when it was sent, so a busy or paused process does not
 * mistake its own delay for silence. One connection and one heartbeat for the whole process: the
 * key cache's channel and the webhook relay's share them.
 */
export function postgresFeed(url: string): ChangeFeed {
  const beats = `shipyard_beat_${randomBytes(16).toString('hex')}`;
  const channels = new Map<string, Set<Subscriber>>();
  let client: pg.Client | undefined;
  let live = false;
  let listening = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let beat: NodeJS.Timeout | undefined;
  /** Heartbeats sent and not heard back yet, by number: when each was sent. */
  const unheard = new Map<number, number>();
  let sent = 0;
  let sending = false;

  const everyone = () => [...channels.values()].flatMap((set) => [...set]);
  const setLive = (value: boolean) => {
    if (live === value) return;
    live = value;
    for (const s of everyone()) s.onLive(value);
  };
  const stopped = () => channels.size === 0;
  const retry = () => {
    if (stopped() || retryTimer) return;
    listening = false;
    setLive(false);
    retryTimer = setTimeout(
      () => {
        retryTimer = undefined;
        void connect();
      },
      RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)],
    );
    retryTimer.unref();
  };
  const connect = async () => {
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5000,
      application_name: 'shipyard-listener',
      keepAlive: true,
    });
    client = c;
    // Only the current connection's fate matters: one given up on may end at any time after.
    c.on('error', () => {
      void c.end().catch(() => undefined);
      if (c === client) retry();
    });
    c.on('end', () => c === client && retry());
    c.on('notification', (n) => {
      if (n.channel !== beats) {
        if (n.payload !== undefined) for (const s of channels.get(n.channel) ?? []) s.onNotice(n.payload);
        return;
      }
      if (c !== client || !listening) return;
      // A heartbeat came back: notices are being heard, up to it.
      const number = Number(n.payload);
      for (const k of unheard.keys()) if (k <= number) unheard.delete(k);
      setLive(true);
    });
    try {
      await c.connect();
      await listen(c, beats);
      for (const channel of channels.keys()) await listen(c, channel);
      if (stopped() || c !== client) return void (await c.end().catch(() => undefined));
      failures = 0;
      unheard.clear();
      listening = true;
    } catch {
      void c.end().catch(() => undefined);
      if (c === client) retry();
    }
  };
  const heartbeat = () => {
    const c = client;
    if (listening && c && !sending) {
      sending = true;
      unheard.set(++sent, Date.now());
      c.query('select pg_notify($1, $2)', [beats, String(sent)])
        .catch(() => undefined)
        .finally(() => {
          sending = false;
        });
    }
    // After the I/O poll: a heartbeat that arrived while this process was busy is counted first.
    setImmediate(() => {
      const oldest = Math.min(...unheard.values());
      if (!listening || Date.now() - oldest <= SILENT_MS) return;
      // Silent: whatever was sent meanwhile may be lost. Trust nothing, and listen anew.
      const silent = client;
      client = undefined;
      sending = false;
      void silent?.end().catch(() => undefined);
      retry();
    });
  };
  const start = () => {
    beat = setInterval(heartbeat, HEARTBEAT_MS);
    beat.unref();
    void connect();
  };
  const stop = () => {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    clearInterval(beat);
    listening = false;
    live = false;
    const c = client;
    client = undefined;
    void c?.end().catch(() => undefined);
  };
  return {
    subscribe(channel, subscriber) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      const first = channels.size === 0;
      const newChannel = !channels.has(channel);
      const set = channels.get(channel) ?? new Set<Subscriber>();
      channels.set(channel, set);
      set.add(subscriber);
      if (first) start();
      else if (newChannel && listening && client) {
        // Live for this channel once its LISTEN is made on the live connection.
        const c = client;
        listen(c, channel).then(
          () => c === client && live && channels.get(channel)?.has(subscriber) && subscriber.onLive(true),
          () => undefined,
        );
      } else if (live) subscriber.onLive(true);
      return () => {
        const its = channels.get(channel);
        if (!its?.delete(subscriber)) return;
        if (its.size === 0) {
          channels.delete(channel);
          if (client && listening) void client.query(`unlisten "${channel}"`).catch(() => undefined);
        }
        if (stopped()) stop();
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
      let failures = 0;
      let timer: NodeJS.Timeout | undefined;
      // The one connection may be busy past the pool's wait (a long transaction, a process busy
      // at start): not live until the LISTEN is made, and tried again until it is.
      const start = async () => {
        try {
          if (!pool) {
            pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
            pool.on('connect', onConnect);
          }
          const client = await pool.connect();
          try {
            // Unsubscribed while it waited: nothing to attach.
            if (stopped) return;
            attach(client);
            await listen(client, channel);
          } finally {
            client.release();
          }
          if (!stopped) onLive(true);
        } catch {
          if (stopped) return;
          onLive(false);
          timer = setTimeout(() => void start(), RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
          timer.unref();
        }
      };
      void start();
      return () => {
        stopped = true;
        clearTimeout(timer);
        pool?.off('connect', onConnect);
        for (const client of listening) client.off('notification', onNotification);
        listening.clear();
      };
    },
  };
}
