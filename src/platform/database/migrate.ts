import { DataSource, MigrationExecutor } from 'typeorm';

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so that many API processes starting at
 * once (or `npm run migrate` beside a running deploy) apply each migration exactly once.
 *
 * The lock is transaction-scoped (`pg_advisory_xact_lock`) and the pending migrations run inside that
 * same transaction on one connection, so it works through PgBouncer in transaction mode too: a session
 * lock (`pg_advisory_lock`) would be taken on whichever server connection the pooler lent, stay there
 * after the statement, and its unlock would land on another one. Two starters then both "hold" it (a
 * session lock is re-entrant on a shared server connection) and run the same migrations at once, and
 * the lock leaks (decision 0108). Here the lock ends with the transaction, whatever happens to the
 * client, and the pooler keeps the transaction on one server connection. One connection suffices, so a
 * pooler with a single server connection per database does not deadlock. The price: the pending
 * migrations commit together (all or none), which a fresh database's first start also gets.
 */
const MIGRATION_LOCK_KEY = 0x7661756c; // 'vaul'

export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    try {
      await runner.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const executor = new MigrationExecutor(dataSource, runner);
      // Inside the open transaction: the executor starts none of its own and commits nothing.
      executor.transaction = 'each';
      const pending = await executor.getPendingMigrations();
      const outside = pending.filter((m) => m.instance?.transaction === false).map((m) => m.name);
      if (outside.length > 0) throw new Error(`migrations that must run outside a transaction: ${outside.join(', ')}`);
      const applied = await executor.executePendingMigrations();
      await runner.commitTransaction();
      return applied.map((m) => m.name);
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    }
  } finally {
    await runner.release();
  }
}

interface MigrationStatus {
  applied: Array<{ name: string; timestamp: number }>;
  pending: string[];
  /** Applied to this database but unknown to this build (a newer build migrated it): this build may not fit. */
  unknown: string[];
}

/** Which of this build's migrations the database has, and what it has that this build does not know; reads only. */
export async function migrationStatus(dataSource: DataSource): Promise<MigrationStatus> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const executor = new MigrationExecutor(dataSource, runner);
    const executed = await executor.getExecutedMigrations();
    const pending = await executor.getPendingMigrations();
    const known = new Set(dataSource.migrations.map((m) => m.name ?? m.constructor.name));
    return {
      applied: executed
        .filter((m) => known.has(m.name))
        .map((m) => ({ name: m.name, timestamp: m.timestamp }))
        .sort((a, b) => a.timestamp - b.timestamp),
      pending: pending.map((m) => m.name),
      unknown: executed.filter((m) => !known.has(m.name)).map((m) => m.name),
    };
  } finally {
    await runner.release();
  }
}
