import { DataSource } from 'typeorm';

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so that many API processes starting at
 * once (or `npm run migrate` beside a running deploy) apply each migration exactly once.
 */
const MIGRATION_LOCK_KEY = 0x7661756c; // 'vaul'

export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
