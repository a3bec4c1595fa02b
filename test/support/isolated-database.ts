import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource } from '../../src/platform/database/data-source';
import { runMigrations } from '../../src/platform/database/migrate';
import { testPostgresAdminUrl } from './test-services';

export interface IsolatedDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of the test's own, created and migrated like the run's (global-setup.ts). For tests
 * whose operation is not scoped to rows they own — key rotation re-wraps every row of the database
 * — and so would change what the other test files, running in parallel, read. On the shared server, or on
 * the server of `adminUrl` (a private PostgreSQL a test stops or freezes).
 */
export async function createIsolatedDatabase(
  label: string,
  adminUrl?: string,
  options: { migrate?: boolean } = {},
): Promise<IsolatedDatabase> {
  const admin = adminUrl ?? testPostgresAdminUrl();
  const name = `vault_forward_test_${label}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const adminQuery = async (sql: string) => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  if (options.migrate !== false) {
    const dataSource = createDataSource({ url: url.toString(), poolSize: 2 });
    await dataSource.initialize();
    try {
      await runMigrations(dataSource);
    } finally {
      await dataSource.destroy();
    }
  }
  return {
    url: url.toString(),
    drop: () =>
      process.env.KEEP_TEST_DATABASE ? Promise.resolve() : adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
