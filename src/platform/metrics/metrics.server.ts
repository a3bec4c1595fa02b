import cluster from 'node:cluster';
import { createServer, Server } from 'node:http';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { applyServerLimits, serverOptions } from '../http/http-limits';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from './metrics.service';

/**
 * GET /metrics on its own port (METRICS_PORT), apart from the API: operators expose it to their
 * Prometheus only, no API token is involved, and a scrape never queues behind forwards in the API's
 * request handling. Off when METRICS_PORT is unset.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The port it listens on (useful with METRICS_PORT=0), or null when off. */
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    // In a group of processes (WEB_CONCURRENCY, WORKER_PROCESSES) the supervisor serves the group's sum:
    // the port is shared, so each process serving it would answer a scrape with its own figures at random.
    if (this.config.metricsPort === null || cluster.isWorker) return;
    const server = createServer(serverOptions(this.config.http), (req, res) => {
      const path = req.url?.split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      this.metrics.scrape().then(
        ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
        (error: unknown) => {
          this.logger.error(`scrape failed: ${error instanceof Error ? error.message : String(error)}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('scrape failed\n');
        },
      );
    });
    // The same limits as the API's server: its port needs no token either.
    applyServerLimits(server, this.config.http, 'Metrics');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort!, this.config.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`Prometheus metrics on http://${this.config.host}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
