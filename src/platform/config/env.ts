import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The parsers every part of the typed configuration shares (config.ts, vault-config.ts). */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds, written as a whole number of seconds or with a unit: `45s`, `30m`, `12h`, `7d`. */
export function durationSeconds(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const match = /^(\d{1,9})([smhd]?)$/.exec(raw.toLowerCase());
  if (!match)
    throw new ConfigError(name, `must be a duration like 7d, 12h, 30m, 45s or a number of seconds, got "${raw}"`);
  const value = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min}s and ${max}s, got ${value}s`);
  return value;
}

export function readableFile(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === undefined) return null;
  const path = resolve(raw);
  if (!existsSync(path)) throw new ConfigError(name, `no file at ${path}`);
  return path;
}

export function url(env: Env, name: string, protocols: string[]): string | null {
  return parsedUrl(env, name, protocols) && optional(env, name)!;
}

/**
 * The variable as a URL of one of `protocols`, null when unset. With `credentials` (where they go
 * instead), a user or password in it is refused: such URLs end up in logs.
 */
export function parsedUrl(env: Env, name: string, protocols: string[], credentials?: string): URL | null {
  const raw = optional(env, name);
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // Never echo the value: connection strings carry passwords.
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => `${p}//`).join(' or ')}, got ${parsed.protocol}//`);
  }
  if (credentials !== undefined && (parsed.username || parsed.password))
    throw new ConfigError(name, `must not carry credentials; ${credentials}`);
  return parsed;
}

export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw.slice(0, 20)}"`);
}

/**
 * The variables that hold a secret, each of which may instead name a file that holds it (`<NAME>_FILE`, as Docker
 * and Kubernetes secrets are mounted). LEDGER_SIGNING_KEY_FILE and VAULT_PKCS11_PIN_FILE are read where those are.
 */
const SECRET_VARIABLES = [
  'DATABASE_URL',
  'DATABASE_DIRECT_URL',
  'REDIS_URL',
  'REDIS_SENTINEL_PASSWORD',
  'VAULT_MASTER_KEYS',
  'CURSOR_SECRET',
  'NETWORK_TOKEN_REQUESTOR_AUTHORIZATION',
] as const;

/**
 * `env` with each secret read from its `<NAME>_FILE` where that is set (its content, a final line break dropped).
 * Both set is refused, as is a file that cannot be read; no message repeats what a file holds.
 */
export function withSecretFiles(env: Env): Env {
  const resolved: Env = { ...env };
  for (const name of SECRET_VARIABLES) {
    const fileVariable = `${name}_FILE`;
    const path = readableFile(env, fileVariable);
    if (path === null) continue;
    if (optional(env, name) !== undefined)
      throw new ConfigError(name, `is set as well as ${fileVariable}; set only one`);
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(fileVariable, `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    resolved[name] = content.replace(/\r?\n$/, '');
    if (resolved[name].trim() === '') throw new ConfigError(fileVariable, `${path} is empty`);
  }
  return resolved;
}
