import { Client } from 'pg';
import { createDataSource } from '../../src/platform/database/data-source';
import { runMigrations } from '../../src/platform/database/migrate';

const PREFIX = 'vault_forward_mutation_';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Global setup of the mutation run (jest.mutation.config.js): Stryker runs Jest hundreds of times in
 * the same worker process, so the worker's database is created and migrated on the first run only
 * (named by the worker's pid) and reused. Databases left by workers that have exited are dropped.
 */
export default async function mutationGlobalSetup(): Promise<void> {
  process.env.TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (process.env.TEST_DATABASE_URL?.includes(`/${PREFIX}${process.pid}`)) return;
  const admin = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE '${PREFIX}%'`,
    );
    for (const { datname } of rows) {
      const pid = Number(datname.slice(PREFIX.length));
      if (pid === process.pid || !alive(pid)) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await client.query(`CREATE DATABASE ${PREFIX}${process.pid}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${PREFIX}${process.pid}`;
  const dataSource = createDataSource({ url: url.toString(), poolSize: 2 });
  await dataSource.initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  process.env.TEST_DATABASE_URL = url.toString();
}
