import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../auth/scopes';
import { ApiProblems } from '../common/openapi/api-problems';
import { CommonErrors } from '../common/problem/common.errors';
import { ProblemException } from '../common/problem/problem';
import { DATABASE_RETRY_AFTER_SECONDS } from '../database/errors';
import { REDIS } from '../queue/redis';

type Check = 'up' | 'down' | 'disabled';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref()),
  ]);
}

class LivenessResponse {
  @ApiProperty({ type: String, enum: ['ok'] })
  status!: 'ok';
}

class ReadinessChecks {
  @ApiProperty({ type: String, enum: ['up'] })
  database!: Check;
  @ApiProperty({ type: String, enum: ['up', 'disabled'], description: '`disabled` when no REDIS_URL is configured.' })
  redis!: Check;
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
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis | null,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers (no dependency is checked). No token needed.' })
  @ApiOkResponse({ type: LivenessResponse })
  live(): LivenessResponse {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database (and Redis, when configured) answer. No token needed.' })
  @ApiOkResponse({ type: ReadinessResponse, description: 'Every dependency answers.' })
  @ApiProblems(CommonErrors.serviceUnavailable)
  async ready(): Promise<ReadinessResponse> {
    const [database, redis] = await Promise.all([
      withTimeout(this.db.query('SELECT 1')).then<Check, Check>(() => 'up', () => 'down'),
      this.redis
        ? withTimeout(this.redis.ping()).then<Check, Check>(() => 'up', () => 'down')
        : Promise.resolve<Check>('disabled'),
    ]);
    const checks = { database, redis };
    const down = Object.entries(checks).filter(([, state]) => state === 'down').map(([name]) => name);
    if (down.length > 0) {
      throw new ProblemException(CommonErrors.serviceUnavailable, `Not ready: ${down.join(' and ')} did not answer.`, undefined, {
        'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
      });
    }
    return { status: 'ok', checks };
  }
}
