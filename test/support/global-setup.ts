import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createDataSource } from '../../src/platform/database/data-source';
import { runMigrations } from '../../src/platform/database/migrate';
import { ensureTestServices, type TestServices } from './test-services';

/**
 * One fresh database per test run on the real local PostgreSQL, migrated with the real migrations;
 * its URL reaches every test worker through the environment. The build is refreshed too (when a
 * source is newer than it, as `npm run cli` does), since the CLI and smoke tests run the compiled entry
 * points exactly as a user does, and the dashboard test loads the built bundle.
 */
export default async function globalSetup(): Promise<void> {
  // The machine's PostgreSQL and Redis when they answer; otherwise private ones for this run (one line says so),
  // which the teardown stops. Jest runs both in this process: the teardown finds them on globalThis.
  const services = await ensureTestServices();
  (globalThis as { vaultForwardTestServices?: TestServices }).vaultForwardTestServices = services;
  if (services.started.length > 0) {
    console.log(`\nnpm test started ${services.started.join(' and ')} for this run: none answered where configured.`);
  }
  process.env.TEST_POSTGRES_ADMIN_URL = services.postgresAdminUrl;
  process.env.TEST_REDIS_URL = services.redisUrl;
  const admin = services.postgresAdminUrl;
  const name = `vault_forward_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();

  const url = new URL(admin);
  url.pathname = `/${name}`;
  process.env.TEST_DATABASE_URL = url.toString();
  process.env.TEST_DATABASE_NAME = name;
  // The run's own forward queue: tests that do not name one share it (as they share the database), and the
  // teardown drops its keys — on the default name, jobs still retrying when a run ended stayed in Redis.
  process.env.TEST_QUEUE_NAME = `test-run-${name.slice('vault_forward_test_'.length)}`;
  // SoftHSM2 reads SOFTHSM2_CONF from the C environment, which a test file cannot change (Jest gives
  // it a copy of process.env): the workers inherit this path, where the PKCS#11 test writes its
  // token's config, in the run's own temporary directory (test/support/softhsm.ts).
  process.env.SOFTHSM2_CONF = join(tmpdir(), 'vf-softhsm2.conf');

  const dataSource = createDataSource({ url: url.toString(), poolSize: 2 });
  await dataSource.initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();

  execFileSync(process.execPath, ['scripts/build.js', '--if-stale'], { stdio: 'inherit' });
}
