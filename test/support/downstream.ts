import { createServer as createHttpServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createSecureServer as createHttp2SecureServer } from 'node:http2';
import { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface Downstream {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A real downstream server on 127.0.0.1 that records every request and answers by path:
 *   /status/NNN  → that status, with a body
 *   /slow        → answers after 3 s
 *   /big         → an 11 MiB body with its content-length
 *   /big-chunked → an 11 MiB body in chunks, length not declared
 *   /stream      → "first\n" at once, "second\n" 1 s later (streamed.ended says when)
 *   /redirect    → 302 to /echo
 *   /spoof       → 200 with headers that try to pass as ours (x-vault-forward-error, x-request-id)
 *   anything else → 200 echoing method, path, headers and body as JSON, with a set-cookie and an x-downstream header
 */
/** Whether the last /stream answer has been completed by the downstream. */
export const streamed = { ended: false };

function handler(received: Received[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = req.url!.split('?')[0];
      const status = /^\/status\/(\d{3})$/.exec(path);
      if (status) {
        res.writeHead(Number(status[1]), { 'content-type': 'application/json', 'x-downstream': 'yes' });
        return res.end(JSON.stringify({ error: 'downstream says no' }));
      }
      if (path === '/slow') {
        const timer = setTimeout(() => res.end('late'), 3_000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 11 * 1024 * 1024 });
        return res.end(Buffer.alloc(11 * 1024 * 1024, 0x61));
      }
      if (path === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        let sent = 0;
        const more = () => {
          while (sent < 11 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        return more();
      }
      if (path === '/stream') {
        streamed.ended = false;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first\n');
        const timer = setTimeout(() => {
          streamed.ended = true;
          res.end('second\n');
        }, 1_000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (path === '/spoof') {
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-vault-forward-error': 'true',
          'x-vault-forward-request-id': 'spoofed',
          'x-request-id': 'spoofed',
        });
        return res.end('{}');
      }
      if (path === '/redirect') {
        res.writeHead(302, { location: '/echo' });
        return res.end();
      }
      res.writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': 'session=downstream; HttpOnly',
        'x-downstream': 'yes',
        'keep-alive': 'timeout=5',
      });
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8') }));
    });
  };
}

function listen(server: Server, protocol: 'http' | 'https', host: string): Promise<Downstream> {
  const received: Received[] = [];
  server.on('request', handler(received));
  return listenOnLoopback(server, protocol, host).then((listening) => ({ ...listening, received }));
}

/**
 * Listens on a free port of 127.0.0.1: the port, the URL (`protocol://host:port`) and a close that cuts the
 * open connections first (so a held or keep-alive connection never stalls a test's afterAll).
 */
export async function listenOnLoopback(
  server: Server,
  protocol: 'http' | 'https' = 'http',
  host = '127.0.0.1',
): Promise<{ port: number; url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `${protocol}://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function startHttpDownstream(): Promise<Downstream> {
  return listen(createHttpServer(), 'http', '127.0.0.1');
}

export interface Certificate {
  cert: string;
  key: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost (trusted by tests through FORWARD_EXTRA_CA_FILE). */
export async function selfSignedCertificate(): Promise<Certificate> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  } as never);
  return { cert: pems.cert, key: pems.private };
}

export function startHttpsDownstream(certificate: Certificate): Promise<Downstream> {
  return listen(createHttpsServer({ cert: certificate.cert, key: certificate.key }), 'https', '127.0.0.1');
}

/**
 * An HTTPS server that offers HTTP/2 by ALPN (and HTTP/1.1 to clients that ask for it), as most public APIs
 * do; it answers every request with the HTTP version it came in on, `{"httpVersion":"1.1"}`.
 */
export function startHttp2CapableDownstream(
  certificate: Certificate,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttp2SecureServer(
    { cert: certificate.cert, key: certificate.key, allowHTTP1: true },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ httpVersion: req.httpVersion }));
      });
    },
  );
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (session) => sessions.add(session));
  server.on('secureConnection', (socket) => sessions.add(socket));
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `https://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            for (const session of sessions) session.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

/** A port on 127.0.0.1 where nothing listens. */
export async function closedPort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
