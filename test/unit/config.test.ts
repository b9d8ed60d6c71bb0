/** The settings several instances are run with (src/config.ts): each read as documented, each mistake refused by name. */
import { describe, expect, it } from 'vitest';
import { databaseSettings, loadConfig } from '../../src/config.js';

const DB = 'postgres://app@pgbouncer:6432/shipyard';

describe('configuration for several instances', () => {
  it('reads the direct and replica URLs, beside DATABASE_URL only, and hands every process the same settings', () => {
    const config = loadConfig({
      DATABASE_URL: DB,
      DATABASE_DIRECT_URL: 'postgres://app@db:5432/shipyard',
      DATABASE_READ_URL: 'postgresql://app@replica:5432/shipyard',
      DATABASE_PREPARED_STATEMENTS: 'false',
    });
    expect(databaseSettings(config)).toMatchObject({
      databaseUrl: DB,
      directUrl: 'postgres://app@db:5432/shipyard',
      readUrl: 'postgresql://app@replica:5432/shipyard',
      preparedStatements: false,
    });
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'postgres://db/x' })).toThrow(
      /DATABASE_DIRECT_URL is set, but DATABASE_URL is not/,
    );
    expect(() => loadConfig({ DATABASE_URL: DB, DATABASE_READ_URL: 'mysql://replica' })).toThrow(
      /DATABASE_READ_URL must be a postgres:\/\/ URL/,
    );
    expect(loadConfig({}).migrateOnStart).toBe(true);
    expect(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ MIGRATE_ON_START: 'no' })).toThrow(/MIGRATE_ON_START must be true or false/);
  });

  it('reads one way to Redis: a URL, Sentinel, or a Cluster', () => {
    expect(loadConfig({ REDIS_URL: 'redis://r:6379' }).redis).toEqual({ url: 'redis://r:6379' });
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379, s2:26379', REDIS_PASSWORD: 'pw' }).redis).toEqual({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      master: 'mymaster',
      password: 'pw',
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: '[::1]:7000,10.0.0.2:7001' }).redis).toEqual({
      cluster: [
        { host: '::1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
    });
    expect(loadConfig({}).redis).toBeUndefined();
    expect(() => loadConfig({ REDIS_URL: 'redis://r', REDIS_CLUSTER_NODES: 'a:1' })).toThrow(
      /set one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES/,
    );
    expect(() => loadConfig({ REDIS_SENTINELS: 'sentinel' })).toThrow(/REDIS_SENTINELS must list host:port pairs/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:70000' })).toThrow(
      /REDIS_CLUSTER_NODES must list host:port pairs/,
    );
  });
});
