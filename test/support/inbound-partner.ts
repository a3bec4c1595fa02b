import { createHmac, X509Certificate } from 'node:crypto';
import { request as httpRequest, IncomingMessage } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { listenOnLoopback } from './downstream';

/**
 * The outside of an inbound route, written independently of src/: a partner's requests (with or without a client
 * certificate), a TLS terminator in front of the API that verifies client certificates and passes them on in a
 * header (as nginx's `$ssl_client_escaped_cert`), and the merchant's upstream that records what reaches it.
 */
export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
}

/** A request over http(s); with `tls`, a client certificate and the CA that issued the server's. */
export function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
  tls?: { ca: string; cert?: string; key?: string },
): Promise<Answer> {
  const target = new URL(url);
  // The path as written: URL would resolve `..` segments, which a test may mean to send.
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  const options = {
    hostname: target.hostname,
    port: target.port,
    path,
    method: init.method ?? 'POST',
    headers: init.headers ?? {},
    ...(tls ?? {}),
  };
  return new Promise((resolve, reject) => {
    const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Standard Webhooks' `v1` signature of `id.timestamp.body` under a `whsec_` secret, from the specification. */
export function standardWebhookSignature(secret: string, id: string, timestamp: string, body: string | Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]);
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

/**
 * A TLS terminator on 127.0.0.1 that asks for a client certificate, verifies it against `clientCas`, and passes
 * the API a verified one, URL-encoded PEM, in `header` (what a caller sent in that header is dropped first).
 */
export async function startTerminator(
  server: { cert: string; key: string },
  clientCas: string[],
  apiUrl: string,
  header: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const api = new URL(apiUrl);
  const terminator = createHttpsServer(
    { ...server, ca: clientCas, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const headers = { ...req.headers };
      delete headers[header];
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      if (socket.authorized && peer.raw) headers[header] = encodeURIComponent(new X509Certificate(peer.raw).toString());
      const upstream = httpRequest(
        { host: api.hostname, port: api.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    },
  );
  return listenOnLoopback(terminator, 'https');
}

export interface Upstream {
  url: string;
  received: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

/** The merchant's endpoint (https): records each request, answers `{"ok":true}`; `/leak` answers with `leaked`. */
export async function startUpstream(certificate: { cert: string; key: string }, leaked: string): Promise<Upstream> {
  const received: Upstream['received'] = [];
  const server = createHttpsServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url!.endsWith('/leak') ? JSON.stringify({ card: leaked }) : '{"ok":true}');
    });
  });
  return { ...(await listenOnLoopback(server, 'https')), received };
}
