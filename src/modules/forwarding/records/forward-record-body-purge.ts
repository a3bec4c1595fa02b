import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { everyPurgeInterval, purgeInBatches } from '../../../platform/database/purges';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { ForwardRecordsRepository } from './forward-records.repository';

/** How often each API process nulls the bodies past their retention. */
const BODY_PURGE_EVERY_MS = 10 * 60 * 1000;
/** Batches of 1,000 rows, at most 50 a run (platform/database/purges.ts). */
const BODY_PURGE_BATCHES = { size: 1_000, max: 50 };

/**
 * Nulls the redacted bodies of forward records past their retention: the days their config asked for when they
 * were recorded (decision 0138), never more than FORWARD_RECORD_BODY_RETENTION_DAYS (at most 30); the record
 * itself stays, and says how long its bodies were kept. Every API process runs it (platform/database/purges.ts), so
 * an outcome being written to a row is never waited for (SKIP LOCKED). The partial index
 * vault_forward_requests_bodies_created_at holds only the rows that still have bodies.
 */
@Injectable()
export class ForwardRecordBodyPurge implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ForwardRecords');
  private stop: (() => void) | undefined;

  constructor(
    private readonly records: ForwardRecordsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.stop = everyPurgeInterval(
      BODY_PURGE_EVERY_MS,
      () => this.purgeExpired(),
      (error) => this.logger.warn(`purge of forward record bodies failed: ${error.message}`),
    );
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /**
   * One run as at `now` (the Clock's by default; null: the database's): the bodies of records past their own
   * retention or the operator's ceiling (0 purges every body, as recording is then off) are nulled, at most
   * BODY_PURGE_BATCHES.max batches. Returns how many records lost their bodies.
   */
  async purgeExpired(now: Date | null = this.clock.now()): Promise<number> {
    const ceiling = this.config.forwardRecordBodyRetentionDays;
    const total = await purgeInBatches((limit) => this.records.purgeBodies(now, ceiling, limit), BODY_PURGE_BATCHES);
    if (total > 0) this.logger.log({ msg: 'purged the bodies of forward records past their retention', count: total });
    return total;
  }
}
