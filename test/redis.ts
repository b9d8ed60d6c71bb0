/** The Redis the tests that need one use: REDIS_URL, or 127.0.0.1:6379; none where nothing answers (those tests are skipped). */
import { createClient, type RedisClientType } from 'redis';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisOrNothing(): Promise<RedisClientType | undefined> {
  const client: RedisClientType = createClient({
    url: REDIS_URL,
    socket: { reconnectStrategy: false, connectTimeout: 1000 },
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return client;
  } catch {
    return undefined;
  }
}
