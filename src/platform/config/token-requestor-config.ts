import { ConfigError, Env, integer, optional, parsedUrl } from './env';

/** Where cryptograms for network tokens are asked for (network-tokens/, docs/decisions/0100). */
export interface TokenRequestorConfig {
  /** NETWORK_TOKEN_REQUESTOR_URL: an absolute http(s) URL without credentials. */
  url: string;
  /** NETWORK_TOKEN_REQUESTOR_AUTHORIZATION: sent as Authorization; null → none. Never logged. */
  authorization: string | null;
  /** NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS: the whole exchange, 100–30,000 ms, 5,000 by default. */
  timeoutMs: number;
}

/**
 * null without NETWORK_TOKEN_REQUESTOR_URL (the caller's cryptograms only). https is required in
 * production, except for a loopback host (a sidecar); credentials go in the authorization variable,
 * never the URL, which is logged.
 */
export function tokenRequestorConfig(env: Env, nodeEnv: string): TokenRequestorConfig | null {
  const raw = optional(env, 'NETWORK_TOKEN_REQUESTOR_URL');
  const authorization = optional(env, 'NETWORK_TOKEN_REQUESTOR_AUTHORIZATION') ?? null;
  const timeoutMs = integer(env, 'NETWORK_TOKEN_REQUESTOR_TIMEOUT_MS', 5_000, 100, 30_000);
  if (raw === undefined) {
    if (authorization !== null)
      throw new ConfigError('NETWORK_TOKEN_REQUESTOR_AUTHORIZATION', 'is set but NETWORK_TOKEN_REQUESTOR_URL is not');
    return null;
  }
  const url = parsedUrl(
    env,
    'NETWORK_TOKEN_REQUESTOR_URL',
    ['https:', 'http:'],
    'set NETWORK_TOKEN_REQUESTOR_AUTHORIZATION instead',
  )!;
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (nodeEnv === 'production' && url.protocol !== 'https:' && !loopback)
    throw new ConfigError(
      'NETWORK_TOKEN_REQUESTOR_URL',
      'must use https:// in production (http only for a loopback host)',
    );
  if (authorization !== null && /[\r\n]/.test(authorization))
    throw new ConfigError('NETWORK_TOKEN_REQUESTOR_AUTHORIZATION', 'must be one line');
  return { url: url.href, authorization, timeoutMs };
}
