import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { ForwardRecordsRepository } from './forward-records.repository';

/** How often each API process nulls the bodies past their retention. */
const BODY_PURGE_EVERY_MS = 10 * 60 * 1000;
/** Rows per UPDATE: short transactions, row locks held briefly. */
const BODY_PURGE_BATCH = 1_000;
/** Batches per run: a backlog (a lowered retention, a long outage) is worked off over several runs, not in one. */
const BODY_PURGE_MAX_BATCHES = 50;

/**
 * Nulls the redacted bodies of forward records older than FORWARD_RECORD_BODY_RETENTION_DAYS (decision
 * 0104); the record itself stays. The idempotency purge's pattern: every API process runs it on a timer,
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
   * One run: the bodies of records created more than `retentionDays` ago (the configured value by
   * default; 0 purges every body, as recording is then off) are nulled, at most
   * BODY_PURGE_MAX_BATCHES batches. Returns how many records lost their bodies.
   */
  async purgeExpired(retentionDays = this.config.forwardRecordBodyRetentionDays): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < BODY_PURGE_MAX_BATCHES; batch++) {
      const updated = await this.records.purgeBodies(retentionDays, BODY_PURGE_BATCH);
      total += updated;
      if (updated < BODY_PURGE_BATCH) break;
    }
    if (total > 0) this.logger.log({ msg: 'purged the bodies of forward records past their retention', count: total });
    return total;
  }
}
