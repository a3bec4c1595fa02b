import { createServer, request, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { HttpMetrics } from '../../src/platform/metrics/http-metrics';
import { Metrics } from '../../src/platform/metrics/metrics.service';

/** The request counter's lines of a scrape. */
async function counted(metrics: Metrics): Promise<string[]> {
  const { body } = await metrics.scrape();
  return body.split('\n').filter((line) => line.startsWith('vault_forward_http_requests_total{'));
}

describe('HttpMetrics: requests by route template, method and status class', () => {
  it("fastify's routes by their template, a request no route takes as unmatched, an unusual method as other", async () => {
    const metrics = new Metrics();
    const fastify = Fastify();
    fastify.get('/buyers/:id', async () => ({}));
    fastify.post('/buyers', async (_request, reply) => reply.status(201).send({}));
    new HttpMetrics(metrics).countRoutes(fastify);
    await fastify.ready();
    try {
      for (const id of ['a', 'b'])
        expect((await fastify.inject({ method: 'GET', url: `/buyers/${id}` })).statusCode).toBe(200);
      expect((await fastify.inject({ method: 'POST', url: '/buyers' })).statusCode).toBe(201);
      expect((await fastify.inject({ method: 'GET', url: '/nothing/here' })).statusCode).toBe(404);
      expect((await fastify.inject({ method: 'PROPFIND', url: '/buyers/a' })).statusCode).toBe(404);
    } finally {
      await fastify.close();
    }
    expect(await counted(metrics)).toEqual([
      'vault_forward_http_requests_total{route="/buyers/:id",method="GET",status_class="2xx"} 2',
      'vault_forward_http_requests_total{route="/buyers",method="POST",status_class="2xx"} 1',
      'vault_forward_http_requests_total{route="unmatched",method="GET",status_class="4xx"} 1',
      'vault_forward_http_requests_total{route="unmatched",method="other",status_class="4xx"} 1',
    ]);
  });

  it('a request answered outside fastify under its fixed route; a caller gone before the answer is "none"', async () => {
    const metrics = new Metrics();
    const requests = new HttpMetrics(metrics);
    let arrived!: () => void;
    let closed!: () => void;
    const secondArrived = new Promise<void>((resolve) => (arrived = resolve));
    const secondClosed = new Promise<void>((resolve) => (closed = resolve));
    let served = 0;
    const server: Server = createServer((req, res) => {
      requests.countServed(req, res, '/vault-forward');
      if (served++ === 0) return void res.writeHead(502).end();
      // The second is never answered: its caller leaves. (countServed's listener was added first, so it has run.)
      res.once('close', closed);
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const post = () => request({ port, host: '127.0.0.1', method: 'POST', path: '/vault-forward' });
    try {
      await new Promise<void>((resolve, reject) =>
        post()
          .on('response', (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end(),
      );
      const leaving = post().on('error', () => undefined);
      leaving.end();
      await secondArrived;
      leaving.destroy();
      await secondClosed;
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(await counted(metrics)).toEqual([
      'vault_forward_http_requests_total{route="/vault-forward",method="POST",status_class="5xx"} 1',
      'vault_forward_http_requests_total{route="/vault-forward",method="POST",status_class="none"} 1',
    ]);
  });
});
