import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CheckoutSessionsRepository } from './checkout-sessions.repository';

/** How often each API process erases expired sessions; reads erase too, so this bounds what a row holds unread. */
const PURGE_EVERY_MS = 15_000;

/**
 * The periodic erasure of expired checkout sessions. Every API process runs it: it is one UPDATE …
 * WHERE expires_at <= now() AND erased_at IS NULL, so concurrent runs erase each row once and never
 * conflict beyond a row lock; rows a day past expiry are deleted.
 */
@Injectable()
export class CheckoutSessionPurge implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('CheckoutSessions');
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly sessions: CheckoutSessionsRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.run(), PURGE_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async run(): Promise<void> {
    try {
      const { erased, deleted } = await this.sessions.purgeExpired();
      if (erased > 0 || deleted > 0) this.logger.log({ msg: 'erased expired checkout sessions', erased, deleted });
    } catch (error) {
      this.logger.warn({ msg: 'checkout session purge failed; tried again later', error: (error as Error).message });
    }
  }
}
