import { Client } from 'pg';
import { dropQueueKeys } from './redis-keys';
import type { TestServices } from './test-services';
import { testPostgresAdminUrl } from './test-services';

export default async function globalTeardown(): Promise<void> {
  try {
    const queueName = process.env.TEST_QUEUE_NAME;
    if (queueName) await dropQueueKeys(queueName, process.env.TEST_REDIS_URL);
    const name = process.env.TEST_DATABASE_NAME;
    if (!name || process.env.KEEP_TEST_DATABASE) return;
    const client = new Client({
      connectionString: testPostgresAdminUrl(),
    });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  } finally {
    // The private PostgreSQL and Redis the set-up started, if any: stopped, their files removed.
    await (globalThis as { vaultForwardTestServices?: TestServices }).vaultForwardTestServices?.stop();
  }
}
