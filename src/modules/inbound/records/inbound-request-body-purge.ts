import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { everyPurgeInterval, purgeInBatches } from '../../../platform/database/purges';
import { Clock, CLOCK } from '../../../platform/time/clock';
import { InboundRequestsRepository } from './inbound-requests.repository';

/** As the forward records' purge: every 10 minutes, batches of 1,000, at most 50 batches a run. */
const PURGE_EVERY_MS = 10 * 60 * 1000;
const PURGE_BATCHES = { size: 1_000, max: 50 };

/**
 * Nulls the kept bodies of inbound requests past their `bodies_kept_until` (the route's days when they were
 * recorded) or past the operator's FORWARD_RECORD_BODY_RETENTION_DAYS (0 erases every body), as
 * ForwardRecordBodyPurge does for forward records (decisions 0138, 0158), in the one purge's way
 * (platform/database/purges.ts); the record stays and still says until when its bodies were kept.
 */
@Injectable()
export class InboundRequestBodyPurge implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('InboundRecords');
  private stop: (() => void) | undefined;

  constructor(
    private readonly records: InboundRequestsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.stop = everyPurgeInterval(
      PURGE_EVERY_MS,
      () => this.purgeExpired(),
      (error) => this.logger.warn(`purge of inbound request bodies failed: ${error.message}`),
    );
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /** One run as at `now` (the Clock's by default; null: the database's). How many records lost their bodies. */
  async purgeExpired(now: Date | null = this.clock.now()): Promise<number> {
    const ceiling = this.config.forwardRecordBodyRetentionDays;
    const total = await purgeInBatches((limit) => this.records.purgeBodies(now, ceiling, limit), PURGE_BATCHES);
    if (total > 0) this.logger.log({ msg: 'purged the bodies of inbound requests past their retention', count: total });
    return total;
  }
}
