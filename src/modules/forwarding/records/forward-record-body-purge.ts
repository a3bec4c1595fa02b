import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { ForwardRecordsRepository } from './forward-records.repository';

/** How often each API process nulls the bodies past their retention. */
const BODY_PURGE_EVERY_MS = 10 * 60 * 1000;
/** Rows per UPDATE: short transactions, row locks held briefly. */
const BODY_PURGE_BATCH = 1_000;
/** Batches per run: a backlog (a lowered retention, a long outage) is worked off over several runs, not in one. */
const BODY_PURGE_MAX_BATCHES = 50;

/**
 * Nulls the redacted bodies of forward records past their retention: the days their config asked for when they
 * were recorded (decision 0138), never more than FORWARD_RECORD_BODY_RETENTION_DAYS (at most 30); the record
 * itself stays, and says how long its bodies were kept. The idempotency purge's pattern: every API process runs it on a timer,
 * in bounded batches picked with FOR UPDATE SKIP LOCKED, so concurrent purges split the rows instead of
 * waiting on one another, and an outcome being written to a row is never waited for. The partial index
 * vault_forward_requests_bodies_created_at holds only the rows that still have bodies.
 */
@Injectable()
export class ForwardRecordBodyPurge implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ForwardRecords');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly records: ForwardRecordsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(
      () =>
        void this.purgeExpired().catch((error: unknown) =>
          this.logger.warn(`purge of forward record bodies failed: ${(error as Error).message}`),
        ),
      BODY_PURGE_EVERY_MS,
    );
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * One run as at `now` (the Clock's by default; null: the database's): the bodies of records past their own
   * retention or the operator's ceiling (0 purges every body, as recording is then off) are nulled, at most
   * BODY_PURGE_MAX_BATCHES batches. Returns how many records lost their bodies.
   */
  async purgeExpired(now: Date | null = this.clock.now()): Promise<number> {
    const ceiling = this.config.forwardRecordBodyRetentionDays;
    let total = 0;
    for (let batch = 0; batch < BODY_PURGE_MAX_BATCHES; batch++) {
      const updated = await this.records.purgeBodies(now, ceiling, BODY_PURGE_BATCH);
      total += updated;
      if (updated < BODY_PURGE_BATCH) break;
    }
    if (total > 0) this.logger.log({ msg: 'purged the bodies of forward records past their retention', count: total });
    return total;
  }
}
