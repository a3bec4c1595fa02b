import { Logger } from '@nestjs/common';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import type { RedisClusterConfig, RedisSentinelConfig } from '../config/config';

/**
 * Any connection of ours: one server (REDIS_URL, or the master the sentinels name), or a Redis Cluster
 * (REDIS_CLUSTER_NODES, decision 0107). Both speak the same commands and events; only duplicate() differs,
 * so every connection after the shared one is made with duplicateRedis().
 */
export type RedisClient = Redis | Cluster;

/** Where the process's Redis is: REDIS_URL's server, through sentinels, or a Cluster (at most one of the two). */
export interface RedisTopology {
  sentinel: RedisSentinelConfig | null;
  cluster: RedisClusterConfig | null;
}

/**
 * BullMQ's key prefix on a Cluster. A BullMQ script touches many keys of one queue at once, so they must
 * hash to one slot: BullMQ's docs ask for a prefix in braces (a hash tag). Both queues share it (one slot,
 * one master): nothing of ours spans the two, and one slot is one place to look. On one server the
 * prefix stays BullMQ's default, so an upgrade does not strand the jobs already queued under it.
 */
export const CLUSTER_QUEUE_PREFIX = '{vault-forward}';

/** The shared ioredis connection (RedisModule), or null when REDIS_URL is unset. */
export const REDIS = Symbol('REDIS');
/** The process's RedisAvailability, or null when REDIS_URL is unset. */
export const REDIS_AVAILABILITY = Symbol('REDIS_AVAILABILITY');

/**
 * A write that announces a change must be answered even when Redis is gone: a publish gives up after
 * this long, and the caches' TTLs bound what the lost notice would have dropped.
 */
export const PUBLISH_TIMEOUT_MS = 500;

/** QUIT waits for a connection that may never come (Redis down); then just drop the socket. */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

/**
 * What ioredis 6 changed by default, put back (every other connection is a duplicate() of the shared one, so
 * inherits it): RESP2, the wire protocol BullMQ's scripts and our subscriber were built and measured on (RESP3
 * changes reply types and pub/sub framing); and a reconnection every 50 ms to 2 s, where ioredis 6 backs off
 * exponentially to 5 s, which would hold the queue and the caches up to 5 s longer after an outage ends.
 * ioredis 6's other default, TCP keep-alive at 30 s, is kept: it notices a peer that vanished.
 */
const IOREDIS_5_BEHAVIOUR: RedisOptions = {
  protocol: 2,
  retryStrategy: (attempt) => Math.min(attempt * 50, 2_000),
};

/**
 * Options of the shared connection. Commands fail after one reconnection attempt instead of queueing
 * until Redis returns (ioredis's default of 20, or BullMQ's `null`, would hang a caller through an
 * outage). BullMQ, which needs `maxRetriesPerRequest: null`, gets its own duplicate() with that
 * option, so the requirement stays on its connections.
 */
export const SHARED_CLIENT_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 1,
  enableReadyCheck: true,
  lazyConnect: false,
  ...IOREDIS_5_BEHAVIOUR,
};

/**
 * Sentinel mode (decision 0094): ioredis asks the sentinels for the master of `name` and, after a failover,
 * asks again on reconnection, so a promoted replica is found without a restart. Set on the shared connection
 * only: every other connection is its duplicate(), which copies these options.
 */
function sentinelOptions(sentinel: RedisSentinelConfig | null): RedisOptions {
  if (!sentinel) return {};
  return {
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    ...(sentinel.password === null ? {} : { sentinelPassword: sentinel.password }),
    // Not ioredis's failoverDetector: its subscriptions to the sentinels outlive quit() and hold the process open.
    // A failover closes the old master's sockets (or they fail), and the reconnection asks the sentinels again.
  };
}

/**
 * Cluster mode (decision 0107): ioredis's Cluster learns the slots from the nodes listed, follows MOVED/ASK,
 * and after a master is lost retries its commands (every 100 ms, up to 16 times) while asking the nodes for
 * the slots again, so a promoted replica is found without a restart. REDIS_URL gives every node's username,
 * password and TLS. Options of one connection (timeouts, retries per request) apply to each node's socket;
 * whether commands wait offline and the ready check are the Cluster's own.
 */
function clusterOptions(url: string, options: RedisOptions): ClusterOptions {
  const { username, password, protocol } = new URL(url);
  const { retryStrategy, ...rest } = options;
  const { redisOptions: node, ...cluster } = splitClusterOptions(rest);
  return {
    ...cluster,
    // Used only when every node is lost (a lost node is left to MOVED and the slots refresh).
    ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
    // ioredis's 1 s failed on a busy machine. No periodic refresh (slotsRefreshInterval): a refresh in flight at
    // quit() re-arms its timer and keeps the process alive; MOVED and closed nodes trigger a refresh anyway.
    slotsRefreshTimeout: 2_000,
    redisOptions: {
      ...node,
      ...(username ? { username: decodeURIComponent(username) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
      ...(protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

/** The process's shared connection: REDIS_URL, through the sentinels or the Cluster when configured. */
export function sharedRedis(url: string, topology: RedisTopology): RedisClient {
  if (topology.cluster) return new Cluster(topology.cluster.nodes, clusterOptions(url, SHARED_CLIENT_OPTIONS));
  return new Redis(url, { ...SHARED_CLIENT_OPTIONS, ...sentinelOptions(topology.sentinel) });
}

/**
 * A new connection like `client` with `options` on top: Redis#duplicate(options), or for a Cluster the same
 * nodes with the options split as clusterOptions() does (Cluster#duplicate takes them in another shape).
 */
export function duplicateRedis(client: RedisClient, options: RedisOptions = {}): RedisClient {
  if (!(client instanceof Cluster)) return client.duplicate(options);
  return client.duplicate([], splitClusterOptions(options));
}

/**
 * Connection options as a Cluster takes them: the offline queue and lazy connection are the Cluster's; the
 * ready check is both the Cluster's (CLUSTER INFO) and each node socket's (INFO), and off means off for both
 * (NO_READY_CHECK's reason holds for either); everything else is each node socket's.
 */
function splitClusterOptions(options: RedisOptions): ClusterOptions & { redisOptions: RedisOptions } {
  const { enableOfflineQueue, enableReadyCheck, lazyConnect, ...node } = options;
  return {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    redisOptions: enableReadyCheck === false ? { ...node, enableReadyCheck } : node,
  };
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * A connection whose commands time out must not run ioredis's ready check (an INFO command): it is
 * subject to the same short timeout, and one that a busy machine answers late counts as a fatal
 * connection error, so the connection is dropped and "redis unavailable" is logged with Redis up.
 * Without it the connection is ready once connected; a Redis still loading its data refuses the
 * command with LOADING, which the caller handles as any failed command.
 */
export const NO_READY_CHECK: RedisOptions = { enableReadyCheck: false };

/**
 * The publishing connection: a publish that Redis does not answer in PUBLISH_TIMEOUT_MS fails (a
 * blackholed path never closes the socket, so only a timer notices). The offline queue stays on so
 * that a publish issued while the connection is first being made (a CLI command) still goes out.
 */
export const PUBLISHER_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 0,
  commandTimeout: PUBLISH_TIMEOUT_MS,
  ...NO_READY_CHECK,
};

/**
 * Tracks whether this process can reach Redis, over all its connections, and logs each change once:
 * "redis unavailable: <reason>" when the first connection fails, "redis available again" when every
 * failed connection is ready again. Health follows what a connection does, never an `error` event by
 * itself: a connection fails when ioredis reconnects it (its socket closed, or could not be opened) and
 * is back when it is ready. An error that leaves the connection up (an unsolicited reply, ioredis's
 * "Command queue state error") is no outage: Redis and the queue work on, so it is only kept as the reason
 * of a reconnection that follows it. ioredis reports every reconnection attempt (every 50 ms–2 s during
 * an outage); those stay silent. Every client must be watched: ioredis prints an unstructured
 * "[ioredis] Unhandled error event" to the console for each error of a client without a listener.
 */
export class RedisAvailability {
  /** Connections that failed and have not been ready since, with the first reason. */
  private readonly failed = new Map<string, { reason: string; client: RedisClient }>();
  private readonly secrets: string[];

  private readonly logger = new Logger('Redis');

  constructor(url: string, sentinelPassword: string | null = null) {
    const { username, password } = new URL(url);
    // Reasons come from sockets and Redis replies; they should never carry the URL, but must not leak it if they do.
    this.secrets = [password, safeDecode(password), url, sentinelPassword ?? ''].filter((s) => s.length >= 3);
    if (username && password) this.secrets.push(`${username}:${password}`);
  }

  /**
   * No connection failed, or each is ready again. Its state is read too, not only its `ready` event: an error a closed
   * socket reports after the new connection is ready (a restore in the middle of a reconnect) would otherwise leave
   * that connection failed until it next reconnects, and the queue refused meanwhile.
   */
  get available(): boolean {
    for (const [name, { client }] of [...this.failed]) if (client.status === 'ready') this.recover(name);
    return this.failed.size === 0;
  }

  watch<C extends RedisClient>(name: string, client: C): C {
    /** The latest error since the connection was last ready: why it closed, when it then does. */
    let lastError: (Error & { code?: string }) | null = null;
    client.on('error', (error: Error & { code?: string }) => {
      lastError = error;
      if (!this.failed.has(name))
        this.logger.debug({ msg: 'redis error', redis: { connection: name, error: this.scrub(error.message) } });
    });
    // Every lost or refused connection is reconnected (a socket closed by the peer emits no error at all);
    // not emitted after quit(), so a shutdown is no outage.
    client.on('reconnecting', () =>
      this.fail(
        name,
        client,
        lastError ? (lastError.code ?? this.scrub(lastError.message)) : 'connection lost',
        lastError,
      ),
    );
    client.on('ready', () => {
      lastError = null;
      this.recover(name);
    });
    return client;
  }

  private fail(name: string, client: RedisClient, reason: string, error: Error | null): void {
    if (this.failed.has(name)) return;
    const wasAvailable = this.failed.size === 0;
    this.failed.set(name, { reason, client });
    if (!wasAvailable) return;
    this.logger.warn({
      msg: `redis unavailable: ${reason}`,
      redis: { connection: name, reason, ...(error ? { error: this.scrub(error.message) } : {}) },
    });
  }

  private recover(name: string): void {
    if (!this.failed.delete(name) || this.failed.size > 0) return;
    this.logger.log({ msg: 'redis available again', redis: { connection: name } });
  }

  scrub(text: string): string {
    let result = text;
    for (const secret of this.secrets) result = result.split(secret).join('***');
    return result;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
