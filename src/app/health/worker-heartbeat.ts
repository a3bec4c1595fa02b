import { writeFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../platform/config/config.module';
import { CLOCK, Clock } from '../../platform/time/clock';
import { withTimeout } from '../../platform/time/with-timeout';
import type { AppConfig } from '../../platform/config/config';
import { REDIS, RedisClient } from '../../platform/redis/redis';
import { HEARTBEAT_INTERVAL_MS } from './worker-heartbeat.constants';
import { DatabaseProbe } from '../../platform/database/database-probe';

const CHECK_TIMEOUT_MS = 2_000;

/**
 * The worker has no HTTP server to probe, so it writes the time into WORKER_HEARTBEAT_FILE whenever
 * PostgreSQL (and Redis, when configured) answer; a stale file means a stuck process or a lost
 * connection, and the container's health check (src/app/health/worker-healthcheck.ts) says so.
 */
@Injectable()
export class WorkerHeartbeat implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHeartbeat.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly database: DatabaseProbe,
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.workerHeartbeatFile) return;
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_INTERVAL_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async beat(): Promise<void> {
    try {
      await Promise.all([
        withTimeout(this.database.ping(), CHECK_TIMEOUT_MS),
        this.redis ? withTimeout(this.redis.ping(), CHECK_TIMEOUT_MS) : undefined,
      ]);
      await writeFile(this.config.workerHeartbeatFile!, `${new Date(this.clock.epochMs()).toISOString()}\n`);
    } catch (error) {
      this.logger.warn(`No heartbeat: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
