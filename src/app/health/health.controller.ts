import { Controller, Get, Inject, Optional } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../../modules/merchants/access/scopes';
import { ApiProblems } from '../../platform/openapi/api-problems';
import { withTimeout } from '../../platform/time/with-timeout';
import { CommonErrors } from '../../platform/problem/common.errors';
import { ProblemException } from '../../platform/problem/problem';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../platform/problem/database-errors';
import { ForwardQueue } from '../../platform/job-queue/forward-queue';
import { REDIS, RedisClient } from '../../platform/redis/redis';
import { DatabaseProbe } from '../../platform/database/database-probe';
import { Draining } from './draining';

type Check = 'up' | 'down' | 'disabled';

const CHECK_TIMEOUT_MS = 2_000;

class LivenessResponse {
  @ApiProperty({ type: String, enum: ['ok'] })
  status!: 'ok';
}

class ReadinessChecks {
  @ApiProperty({ type: String, enum: ['up'] })
  database!: Check;
  @ApiProperty({ type: String, enum: ['up', 'disabled'], description: '`disabled` when no REDIS_URL is configured.' })
  redis!: Check;
  @ApiProperty({
    type: String,
    enum: ['up', 'down', 'disabled'],
    description:
      'The engine of queued forwards, for information: `down` does not make the API unready; `disabled` with QUEUE_BACKEND=none.',
  })
  queue!: Check;
}

class ReadinessResponse {
  @ApiProperty({ type: String, enum: ['ok'] })
  status!: 'ok';
  @ApiProperty({ type: ReadinessChecks })
  checks!: ReadinessChecks;
}

@ApiTags('Health')
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly database: DatabaseProbe,
    private readonly draining: Draining,
    @Inject(REDIS) private readonly redis: RedisClient | null,
    @Optional() private readonly queue?: ForwardQueue,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers (no dependency is checked). No token needed.' })
  @ApiOkResponse({ type: LivenessResponse })
  live(): LivenessResponse {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: the database (and Redis, when configured) answer. No token needed.',
    description:
      'Not ready (503) from the moment the process is told to stop (SIGTERM) while it still serves what is in flight. ' +
      'checks.queue reports the engine of queued forwards (up, down, or disabled with QUEUE_BACKEND=none) for information only: ' +
      'with the queue down an async forward is a 503 with Retry-After while synchronous forwards work, so the API stays ready.',
  })
  @ApiOkResponse({ type: ReadinessResponse, description: 'Every dependency that decides readiness answers.' })
  @ApiProblems(CommonErrors.serviceUnavailable)
  async ready(): Promise<ReadinessResponse> {
    if (this.draining.active)
      throw new ProblemException(
        CommonErrors.serviceUnavailable,
        'Not ready: this process is shutting down.',
        undefined,
        {
          'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
        },
      );
    const [database, redis] = await Promise.all([
      withTimeout(this.database.ping(), CHECK_TIMEOUT_MS).then<Check, Check>(
        () => 'up',
        () => 'down',
      ),
      this.redis
        ? withTimeout(this.redis.ping(), CHECK_TIMEOUT_MS).then<Check, Check>(
            () => 'up',
            () => 'down',
          )
        : Promise.resolve<Check>('disabled'),
    ]);
    // Only what every route needs decides readiness; the queue (async forwards only) is reported beside it.
    const required = { database, redis };
    const down = Object.entries(required)
      .filter(([, state]) => state === 'down')
      .map(([name]) => name);
    const checks = { ...required, queue: this.queueState() };
    if (down.length > 0) {
      throw new ProblemException(
        CommonErrors.serviceUnavailable,
        `Not ready: ${down.join(' and ')} did not answer.`,
        undefined,
        {
          'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
        },
      );
    }
    return { status: 'ok', checks };
  }

  /** As the producer last saw it (its connection's state on Redis; the last enqueue on PostgreSQL): no extra round trip. */
  private queueState(): Check {
    if (!this.queue || this.queue.backend === 'none') return 'disabled';
    return this.queue.isAvailable() ? 'up' : 'down';
  }
}
