import { ConfigError, Env, optional } from './env';

export interface RedisSentinelConfig {
  sentinels: Array<{ host: string; port: number }>;
  /** The master group's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  name: string;
  /** The sentinels' own password (`requirepass` on the sentinels), apart from the master's in REDIS_URL. */
  password: string | null;
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
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0 || entries.length > 32)
    throw new ConfigError('REDIS_SENTINELS', 'must list 1–32 host:port entries');
  const sentinels = entries.map((entry) => {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535)
      throw new ConfigError('REDIS_SENTINELS', `"${entry.slice(0, 100)}" is not host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
  return { sentinels, name, password };
}
