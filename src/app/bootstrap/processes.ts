import cluster, { Worker } from 'node:cluster';
import { createServer, Server } from 'node:http';
import { AggregatorRegistry } from 'prom-client';
import { pino } from 'pino';
import type { AppConfig } from '../../platform/config/config';
import { LINE_OPTIONS, logDestination } from '../../platform/logging/logging.module';
import { applyServerLimits, serverOptions } from '../../platform/http/http-limits';
import { SYSTEM_CLOCK } from '../../platform/time/clock';

/** What a process of a group sends its supervisor once it serves (the API listens; a worker consumes). */
const READY = 'vault-forward:ready';
/** A process that dies sooner than this after its start counts towards a crash loop. */
const QUICK_EXIT_MS = 10_000;
/** Quick exits in a row after which the supervisor gives up and exits 1, for the orchestrator to see. */
const CRASH_LOOP = 5;
/** A process that does not stop within this after SIGTERM (its own grace is 25 s) is killed. */
const STOP_GRACE_MS = 30_000;
/** How long a retiring process may finish its open connections before its graceful stop begins. */
const DRAIN_MS = 5_000;

/** In a process of a group: tells the supervisor this process is serving. A no-op in a lone process. */
export function reportReady(): void {
  if (cluster.isWorker) process.send?.({ type: READY });
}

/**
 * Runs `start` in `count` processes of this script (node:cluster) that share one listening socket, or
 * in this process when `count` is 1. The supervisor (the process that was started) serves nothing
 * itself: it starts the group, replaces a process that dies (giving up after a crash loop), replaces
 * them one at a time on SIGHUP, each new one serving before its predecessor is stopped, stops them
 * all on SIGTERM/SIGINT, and serves GET /metrics summed over the group when METRICS_PORT is set.
 */
export function runProcessGroup(
  role: 'api' | 'worker',
  count: number,
  config: AppConfig,
  start: () => Promise<void>,
): void {
  if (count <= 1 || cluster.isWorker) {
    start().catch((error: unknown) => {
      console.error(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
    return;
  }
  new Supervisor(role, count, config).start();
}

class Supervisor {
  private readonly logger = pino(
    { ...LINE_OPTIONS, base: { pid: process.pid, context: 'Processes' } },
    logDestination(),
  );
  private readonly members = new Set<Worker>();
  /** Processes being replaced or stopped on purpose: their exit is not a crash. */
  private readonly retiring = new Set<Worker>();
  private quickExits = 0;
  private stopping = false;
  private rolling = false;
  private metricsServer: Server | null = null;

  constructor(
    private readonly role: 'api' | 'worker',
    private readonly count: number,
    private readonly config: AppConfig,
  ) {
    this.logger.level = config.logLevel;
  }

  start(): void {
    // API processes accept from the one listening socket themselves (decision 0106): under the default
    // round-robin the supervisor accepts each connection and keeps its copy open until the process it
    // handed it to says it took it, so a process killed in that moment left its caller hanging for good.
    // Set before the first fork, as node:cluster requires.
    if (this.role === 'api') cluster.schedulingPolicy = cluster.SCHED_NONE;
    this.logger.info({ msg: `starting ${this.count} ${this.role} processes`, processes: this.count });
    for (let i = 0; i < this.count; i++) this.fork();
    process.on('SIGTERM', () => void this.stop());
    process.on('SIGINT', () => void this.stop());
    process.on('SIGHUP', () => void this.rollingRestart());
    if (this.config.metricsPort !== null) this.serveMetrics();
  }

  private fork(): Worker {
    const worker = cluster.fork();
    const started = SYSTEM_CLOCK.epochMs();
    this.members.add(worker);
    worker.on('exit', (code, signal) => {
      this.members.delete(worker);
      if (this.retiring.delete(worker) || this.stopping) return;
      const quick = SYSTEM_CLOCK.epochMs() - started < QUICK_EXIT_MS;
      this.quickExits = quick ? this.quickExits + 1 : 0;
      this.logger.error({
        msg: `${this.role} process ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`,
        exited: { pid: worker.process.pid, code, signal },
      });
      if (this.quickExits >= CRASH_LOOP) {
        this.logger.fatal(`${this.role} processes keep exiting right after start; stopping`);
        void this.stop(1);
        return;
      }
      // Backs off while processes die at start (a bad deployment), not after a long healthy run.
      setTimeout(() => this.stopping || this.fork(), quick ? Math.min(30_000, 500 * 2 ** this.quickExits) : 0);
    });
    return worker;
  }

  private ready(worker: Worker): Promise<void> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if ((message as { type?: unknown } | null)?.type !== READY) return;
        worker.off('exit', onExit);
        resolve();
      };
      const onExit = () => {
        worker.off('message', onMessage);
        reject(new Error(`process ${worker.process.pid} exited before it was ready`));
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
  }

  /** One at a time: a new process serves before the one it replaces stops, so the group never serves with fewer. */
  private async rollingRestart(): Promise<void> {
    if (this.rolling || this.stopping) return;
    this.rolling = true;
    this.logger.info(`SIGHUP: replacing the ${this.role} processes one at a time`);
    try {
      for (const old of [...this.members]) {
        if (this.stopping) return;
        const fresh = this.fork();
        await this.ready(fresh);
        await this.retire(old);
      }
      this.logger.info(`replaced every ${this.role} process`);
    } catch (error) {
      this.logger.error(`rolling restart stopped: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.rolling = false;
    }
  }

  /**
   * Stops it taking connections, lets it finish what it holds, then SIGTERM (its graceful stop), and SIGKILL
   * if it has not exited within STOP_GRACE_MS. The disconnect comes first: a process that is closing answers
   * what still reaches it with 503 (fastify's return503OnClosing, right for a lone process behind a
   * balancer), and until it closes its copy of the listening socket it would go on accepting connections
   * (the socket itself stays open for the others, with what waits in its queue).
   * Its 'disconnect' comes once its open connections have ended, or DRAIN_MS bounds the wait (keep-alive).
   */
  private async retire(worker: Worker): Promise<void> {
    this.retiring.add(worker);
    if (worker.isDead()) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (worker.isConnected()) {
      const drained = new Promise<void>((resolve) => worker.once('disconnect', () => resolve()));
      worker.disconnect();
      await Promise.race([drained, exited, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
    }
    if (!worker.isDead()) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private async stop(code = 0): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.logger.info(`stopping ${this.members.size} ${this.role} processes`);
    await Promise.all([...this.members].map((worker) => this.retire(worker)));
    await new Promise<void>((resolve) => (this.metricsServer ? this.metricsServer.close(() => resolve()) : resolve()));
    process.exit(code);
  }

  /** The group's metrics, summed by prom-client's cluster aggregator (counters add up; see metrics.service.ts). */
  private serveMetrics(): void {
    const registry = new AggregatorRegistry();
    const server = createServer(serverOptions(this.config.http), (req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      registry.clusterMetrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (error: unknown) => {
          this.logger.error(`scrape failed: ${error instanceof Error ? error.message : String(error)}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('scrape failed\n');
        },
      );
    });
    applyServerLimits(server, this.config.http, 'Metrics');
    server.listen(this.config.metricsPort!, this.config.host, () => {
      const address = server.address();
      const port = address && typeof address === 'object' ? address.port : this.config.metricsPort;
      this.logger.info(
        `Prometheus metrics of the ${this.role} processes on http://${this.config.host}:${port}/metrics`,
      );
    });
    this.metricsServer = server;
  }
}
