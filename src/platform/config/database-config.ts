import { boolean, ConfigError, Env, url } from './env';

/** How the processes reach PostgreSQL when DATABASE_URL is a connection pooler (decision 0108). */
export interface DatabaseRouting {
  /**
   * DATABASE_TRANSACTION_POOLING: DATABASE_URL is a PgBouncer (or another pooler) in transaction mode, which
   * hands each transaction to whichever server connection is free. Then nothing may rely on the session
   * outliving a transaction: the forwarding hot path sends unnamed statements instead of named prepared ones
   * (platform/database/sql.ts). Migrations and our advisory locks are safe either way (transaction-scoped).
   */
  transactionPooling: boolean;
  /**
   * DATABASE_DIRECT_URL: the same database through a connection that keeps its session (PostgreSQL itself, or
   * a pooler in session mode), for BullMQ's PostgreSQL engine, which LISTENs for new jobs and pins its
   * schema with a session search_path. null → DATABASE_URL serves it too.
   */
  directUrl: string | null;
}

export function databaseRouting(env: Env, databaseUrl: string | null, queueBackend: string): DatabaseRouting {
  const transactionPooling = boolean(env, 'DATABASE_TRANSACTION_POOLING', false);
  const directUrl = url(env, 'DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']);
  if ((transactionPooling || directUrl) && !databaseUrl) {
    const name = transactionPooling ? 'DATABASE_TRANSACTION_POOLING' : 'DATABASE_DIRECT_URL';
    throw new ConfigError(name, 'needs DATABASE_URL (the embedded database has no pooler in front of it)');
  }
  // Refused here rather than found later as a worker that waits up to an hour for jobs it was never told of.
  if (transactionPooling && queueBackend === 'postgres' && !directUrl) {
    throw new ConfigError(
      'DATABASE_DIRECT_URL',
      'is required with DATABASE_TRANSACTION_POOLING and the postgres queue backend: BullMQ LISTENs for jobs ' +
        'and sets a session search_path, which transaction pooling loses',
    );
  }
  return { transactionPooling, directUrl };
}
