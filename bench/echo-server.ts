/** The downstream for bench:forward: answers every request with a small JSON echo of its size. */
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  let size = 0;
  req.on('data', (chunk: Buffer) => (size += chunk.length));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, received: size }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
