import { ClientBase, types as pgTypesDefault } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { Timestamp } from './timestamp';

const TIMESTAMPTZ_OID = 1184;

function parseTimestamptz(text: string): Timestamp | string {
  try {
    return Timestamp.parse(text);
  } catch {
    return text; // 'infinity' and friends: no column of ours holds them
  }
}

/**
 * Per-connection type parsers (not the global `pg.types`, which would leak into any other pg user in
 * the process): timestamptz arrives as a microsecond-exact Timestamp instead of a truncating Date.
 */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pgTypesDefault.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  applicationName?: string;
  /**
   * Client-side bound on one query (pg's query_timeout): past it the query fails and its connection is
   * dropped, so a hung network path becomes an error (503) instead of a request that never ends.
   * Unset for the CLI, whose migrations and key rotation may legitimately run long.
   */
  queryTimeoutMs?: number;
  /**
   * The entities this data source maps. None by default: the API, worker and CLI get theirs from
   * each feature module's `TypeOrmModule.forFeature` (autoLoadEntities in CoreModule), so this layer
   * names no feature; migrations need none; a script that uses a repository passes its entity.
   */
  entities?: DataSourceOptions['entities'];
}

/**
 * Bounds on waiting for PostgreSQL. A stopped or unreachable database must end a request in a 503
 * within seconds, never hang it: a new connection gets CONNECT_TIMEOUT_MS, and TCP keepalive finds a
 * pooled connection whose peer vanished without a reset.
 */
export const CONNECT_TIMEOUT_MS = 3_000;
const KEEPALIVE_IDLE_MS = 10_000;

/**
 * Set once per new connection, as a SET rather than the start-up parameter `options=-c TimeZone=UTC`:
 * PgBouncer refuses a connection carrying `options` (`unsupported startup parameter`), and in transaction
 * mode a session setting would stay behind on the server connection for the next client. TimeZone is
 * one of the few settings PgBouncer tracks per client: it replays the client's value on whichever server
 * connection the client gets next (decision 0108). On PostgreSQL itself it is an ordinary session SET.
 */
export const SET_UTC = "SET TimeZone TO 'UTC'";

async function speakUtc(client: ClientBase): Promise<void> {
  await client.query(SET_UTC);
}

export function dataSourceOptions(options: DatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    entities: options.entities ?? [],
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    // The schema changes only through migrations, reviewed like code.
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: options.poolSize,
      types: pgTypes,
      // Sessions speak UTC, so timestamps print with +00 regardless of the server's TimeZone setting.
      onConnect: speakUtc,
      application_name: options.applicationName ?? 'vault-forward',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    },
  };
}

export function createDataSource(options: DatabaseOptions): DataSource {
  return new DataSource(dataSourceOptions(options));
}
