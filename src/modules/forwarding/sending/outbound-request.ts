/**
 * The request as it will leave for the downstream, built once the placeholders are filled and then
 * handed through the authentication steps to the DownstreamClient. A plain value: no HTTP handler,
 * no Nest request, so the queued worker builds and sends it the same way.
 */
export interface OutboundRequest {
  url: URL;
  method: string;
  /** Lower-case names; the values exactly as they will be sent. */
  headers: Record<string, string>;
  /** The body byte for byte as it will be sent; steps may replace it (JWE) and sign it (HMAC). */
  body: Buffer | undefined;
  timeoutMs: number;
  /** Listed in FORWARD_INSECURE_HOSTS: no address guard. */
  trusted: boolean;
  /** The TLS client certificate to present, set by a mutual-tls method; null for none. */
  identity: ClientIdentity | null;
}

/**
 * A mutual-TLS client identity. `key` (method id and version) keys its connection pool, so TLS
 * sessions are reused across forwards with this identity and never shared with another method, and
 * a changed method gets a fresh pool.
 */
export interface ClientIdentity {
  key: string;
  methodId: string;
  cert: string;
  privateKey: string;
  passphrase: string | undefined;
  /** PEM bundle trusted for this downstream instead of the system roots; undefined for the usual trust. */
  ca: string | undefined;
}

/**
 * Never forwarded: connection-level headers (RFC 9110 §7.6.1). Here rather than in modules/forwarding/request/forward-headers.ts
 * because the client drops them too, and outbound/ does not import forwarding/.
 */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
