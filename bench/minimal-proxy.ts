import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { Agent } from 'undici';

/**
 * The least a forwarding proxy can do with undici: read the body, optionally rewrite it, send it to
 * the target named in x-vault-forward-url over a keep-alive pool, return the answer. Tells the bench
 * (its parent process) the port it listens on. BENCH_PROCESSES=N runs it in N processes under node:cluster,
 * each accepting from the one shared socket (SCHED_NONE) as the API's processes do (WEB_CONCURRENCY, decision
 * 0106): the like-for-like baseline for the API's process groups.
 */
export function startMinimalProxy(rewrite: (body: Buffer) => Buffer = (body) => body): void {
  const processes = Number(process.env.BENCH_PROCESSES ?? 1);
  if (processes > 1 && cluster.isPrimary) {
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    const probe = createTcpServer().listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => {
        let listening = 0;
        for (let i = 0; i < processes; i++)
          cluster.fork({ BENCH_PROXY_PORT: String(port) }).on('message', () => {
            if (++listening === processes) process.send?.({ port });
          });
      });
    });
    process.on('SIGTERM', () => process.exit(0));
    return;
  }
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = new URL(String(req.headers['x-vault-forward-url']));
      agent
        .request({
          origin: target.origin,
          path: target.pathname,
          method: String(req.headers['x-vault-forward-http-method'] ?? 'POST'),
          headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
          body: rewrite(Buffer.concat(chunks)),
        })
        .then(async (response) => {
          const body = Buffer.from(await response.body.arrayBuffer());
          res.writeHead(response.statusCode, {
            'content-type': String(response.headers['content-type'] ?? 'application/octet-stream'),
          });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  server.keepAliveTimeout = 60_000;
  const port = Number(process.env.BENCH_PROXY_PORT ?? 0);
  server.listen(port, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
}
