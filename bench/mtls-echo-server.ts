/**
 * The mutual-TLS downstream for bench:forward: the echo server over HTTPS, requiring a client
 * certificate from the CA it is given (PEMs in BENCH_TLS_*). It counts its TLS handshakes
 * ('secureConnection') and reports the count when asked over IPC.
 */
import { createServer } from 'node:https';

let handshakes = 0;
const server = createServer(
  {
    cert: process.env.BENCH_TLS_CERT,
    key: process.env.BENCH_TLS_KEY,
    ca: process.env.BENCH_TLS_CLIENT_CA,
    requestCert: true,
    rejectUnauthorized: true,
  },
  (req, res) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => (size += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, received: size }));
    });
  },
);
server.on('secureConnection', () => handshakes++);
server.keepAliveTimeout = 60_000;
process.on('message', () => process.send?.({ handshakes }));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
