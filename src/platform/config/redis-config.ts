import { ConfigError, Env, optional } from './env';

export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisSentinelConfig {
  sentinels: RedisNode[];
  /** The master group's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  name: string;
  /** The sentinels' own password (`requirepass` on the sentinels), apart from the master's in REDIS_URL. */
  password: string | null;
}

/**
 * REDIS_CLUSTER_NODES (decision 0107): some nodes of a Redis Cluster to learn its topology from (ioredis's
 * Cluster); REDIS_URL's username, password and TLS apply to every node, its host is ignored.
 */
export interface RedisClusterConfig {
  nodes: RedisNode[];
}

/** A comma list of 1–32 host:port entries (IPv6 in brackets), refused naming `variable`. */
function hostPortList(variable: string, raw: string): RedisNode[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0 || entries.length > 32) throw new ConfigError(variable, 'must list 1–32 host:port entries');
  return entries.map((entry) => {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535)
      throw new ConfigError(variable, `"${entry.slice(0, 100)}" is not host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

export function redisSentinel(env: Env, redisUrl: string | null): RedisSentinelConfig | null {
  const raw = optional(env, 'REDIS_SENTINELS');
  const name = optional(env, 'REDIS_SENTINEL_NAME');
  const password = optional(env, 'REDIS_SENTINEL_PASSWORD') ?? null;
  if (raw === undefined) {
    if (name !== undefined) throw new ConfigError('REDIS_SENTINEL_NAME', 'is set but REDIS_SENTINELS is unset');
    if (password !== null) throw new ConfigError('REDIS_SENTINEL_PASSWORD', 'is set but REDIS_SENTINELS is unset');
    return null;
  }
  if (!redisUrl)
    throw new ConfigError('REDIS_SENTINELS', "needs REDIS_URL too (its password, database and TLS are the master's)");
  if (name === undefined) throw new ConfigError('REDIS_SENTINEL_NAME', 'is required with REDIS_SENTINELS');
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name))
    throw new ConfigError('REDIS_SENTINEL_NAME', 'must be 1–64 letters, digits, ., - or _');
  return { sentinels: hostPortList('REDIS_SENTINELS', raw), name, password };
}

/**
 * REDIS_CLUSTER_NODES: as REDIS_SENTINELS, REDIS_URL stays the switch that turns Redis on and carries the
 * credentials and TLS; a Cluster has database 0 only, so a REDIS_URL naming another one is refused.
 */
export function redisCluster(env: Env, redisUrl: string | null): RedisClusterConfig | null {
  const raw = optional(env, 'REDIS_CLUSTER_NODES');
  if (raw === undefined) return null;
  if (!redisUrl)
    throw new ConfigError('REDIS_CLUSTER_NODES', "needs REDIS_URL too (its username, password and TLS are the nodes')");
  if (optional(env, 'REDIS_SENTINELS') !== undefined)
    throw new ConfigError('REDIS_CLUSTER_NODES', 'and REDIS_SENTINELS exclude each other: set one');
  const database = new URL(redisUrl).pathname.replace(/^\//, '');
  if (database !== '' && database !== '0')
    throw new ConfigError(
      'REDIS_URL',
      'must name database 0 (or none) with REDIS_CLUSTER_NODES: a Cluster has no other',
    );
  return { nodes: hostPortList('REDIS_CLUSTER_NODES', raw) };
}
