import { ConfigError, Env, optional } from './env';

/**
 * INBOUND_CLIENT_CERT_HEADER (decision 0154): the request header in which the TLS terminator in front of the API
 * passes on the client certificate it verified the handshake of (nginx `$ssl_client_escaped_cert`, Envoy, Traefik),
 * URL-encoded PEM or base64 DER. The API listens on plain HTTP and makes no TLS handshake itself, so inbound routes
 * whose callers authenticate with `mutual-tls` work only when this is set; null (unset) refuses them. The terminator
 * must set the header on every request, replacing whatever a caller sent, or a caller could name any certificate.
 */
export function inboundClientCertHeader(env: Env): string | null {
  const raw = optional(env, 'INBOUND_CLIENT_CERT_HEADER');
  if (raw === undefined) return null;
  const name = raw.trim().toLowerCase();
  if (!/^[a-z0-9!#$%&'*+.^_`|~-]{1,100}$/.test(name))
    throw new ConfigError('INBOUND_CLIENT_CERT_HEADER', 'must be an HTTP header name (a token of 1–100 characters)');
  return name;
}
