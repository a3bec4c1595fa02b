import { isIP } from 'node:net';
import { isLocalhostName, webOrigin } from './web-origin';
import { ConfigError, Env, optional } from './env';

/**
 * SECURE_FIELDS_ORIGIN (decision 0140): the origin whose Host the API process answers with the Secure Fields frames
 * and the tokenless card submission, and nothing else. Outside production it defaults to
 * `http://secure-fields.localhost:<PORT>` (browsers resolve *.localhost to loopback). In production the feature is
 * off (null) until it is set, and then it must be https on a host of its own: not a localhost name, and not the
 * address the API listens on. (The API and the dashboard, served by the API under /dashboard, can never answer on it:
 * every request with that Host gets the frames' routes only.)
 */
export function secureFieldsOrigin(env: Env, nodeEnv: string, host: string, port: number): string | null {
  const raw = optional(env, 'SECURE_FIELDS_ORIGIN');
  if (raw === undefined) return nodeEnv === 'production' ? null : `http://secure-fields.localhost:${port}`;
  const check = webOrigin(raw);
  if ('problem' in check) throw new ConfigError('SECURE_FIELDS_ORIGIN', `${check.problem}, got "${raw.slice(0, 100)}"`);
  const url = new URL(check.origin);
  if (nodeEnv === 'production') {
    if (url.protocol !== 'https:' || isLocalhostName(url.hostname))
      throw new ConfigError('SECURE_FIELDS_ORIGIN', 'must be an https origin on a public host in production');
    if (url.hostname === host.toLowerCase() || isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0)
      throw new ConfigError(
        'SECURE_FIELDS_ORIGIN',
        'must name a host of its own (a DNS name pointing at the API, distinct from the API’s and the dashboard’s), not an address',
      );
  }
  return check.origin;
}
