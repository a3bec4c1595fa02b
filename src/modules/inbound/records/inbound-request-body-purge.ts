import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { InboundRequestsRepository } from './inbound-requests.repository';

/** As the forward records' purge: every 10 minutes, batches of 1,000, at most 50 batches a run. */
const PURGE_EVERY_MS = 10 * 60 * 1000;
const PURGE_BATCH = 1_000;
const PURGE_MAX_BATCHES = 50;

/**
 * Nulls the kept bodies of inbound requests past their `bodies_kept_until` (the route's days when they were
 * recorded) or past the operator's FORWARD_RECORD_BODY_RETENTION_DAYS (0 erases every body), as
 * ForwardRecordBodyPurge does for forward records (decisions 0138, 0158): every API process on a timer, in
 * SKIP LOCKED batches; the record stays and still says until when its bodies were kept.
 */
@Injectable()
export class InboundRequestBodyPurge implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('InboundRecords');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly records: InboundRequestsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(
      () =>
        void this.purgeExpired().catch((error: unknown) =>
          this.logger.warn(`purge of inbound request bodies failed: ${(error as Error).message}`),
        ),
      PURGE_EVERY_MS,
    );
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** One run as at `now` (the Clock's by default; null: the database's). How many records lost their bodies. */
  async purgeExpired(now: Date | null = this.clock.now()): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      const updated = await this.records.purgeBodies(now, this.config.forwardRecordBodyRetentionDays, PURGE_BATCH);
      total += updated;
      if (updated < PURGE_BATCH) break;
    }
    if (total > 0) this.logger.log({ msg: 'purged the bodies of inbound requests past their retention', count: total });
    return total;
  }
}
