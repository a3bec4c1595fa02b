/**
 * What a request signer reads of a request as it will be sent: method, URL (path and query as sent),
 * the headers the client sends besides `host` (lower-case names) and the body bytes. Signers return the
 * headers to add; they never change the body.
 */
export interface SignableRequest {
  method: string;
  url: URL;
  headers: Readonly<Record<string, string>>;
  body: Buffer | undefined;
}

/** The `host` header the HTTP client sends for this URL: the host, and the port when it is not the scheme's default. */
export function hostHeader(url: URL): string {
  return url.host;
}

/** RFC 7231 IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. */
export function httpDate(nowMs: number): string {
  return new Date(nowMs).toUTCString();
}
