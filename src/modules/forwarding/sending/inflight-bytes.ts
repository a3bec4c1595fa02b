import type { ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { Metrics } from '../../../platform/metrics/metrics.service';
import { ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { OutboundErrors } from './outbound.errors';

/**
 * Seconds a refused caller is told to wait. Bytes come back as forwards finish, most within a
 * second; a longer wait would only idle capacity that is already free again.
 */
const CAPACITY_RETRY_AFTER_SECONDS = 1;

/**
 * The bytes of request and filled bodies that forwards in flight hold in this process, in all and
 * per merchant account. Per process by design: each API process protects its own memory, so the
 * limits need no shared state and cost two additions per body (docs/decisions/0044, "Bytes in
 * flight and the filled-body cap").
 */
@Injectable()
export class InflightBytes {
  private total = 0;
  private readonly perMerchant = new Map<string, number>();
  readonly processLimit: number;
  readonly merchantLimit: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig, metrics: Metrics) {
    this.processLimit = config.forwardMaxInflightBytes;
    this.merchantLimit = config.forwardMaxInflightBytesPerMerchant;
    metrics.gauge(
      'forward_inflight_bytes',
      'Request and filled bodies held by forwards in flight in this process (FORWARD_MAX_INFLIGHT_BYTES bounds it).',
      () => this.total,
    );
  }

  /**
   * A lease for one request answered on Node's response: its bodies' bytes count until the answer is done or the
   * caller gone, and the handler's own work (which may outlast a caller who left) has settled — call `settled`
   * when it has.
   */
  leaseUntilAnswered(res: ServerResponse): { lease: InflightLease; settled: () => void } {
    const lease = new InflightLease(this);
    let ending = 2;
    const settled = () => {
      if (--ending === 0) lease.release();
    };
    res.once('close', settled);
    return { lease, settled };
  }

  /** Bytes held now, in all or by one merchant account (for tests and metrics). */
  held(merchantAccountId?: string): number {
    return merchantAccountId === undefined ? this.total : (this.perMerchant.get(merchantAccountId) ?? 0);
  }

  /** @internal through InflightLease only */
  take(merchantAccountId: string, bytes: number, what: ProblemFieldError): void {
    const merchant = this.perMerchant.get(merchantAccountId) ?? 0;
    if (merchant + bytes > this.merchantLimit)
      throw full('FORWARD_MAX_INFLIGHT_BYTES_PER_MERCHANT', this.merchantLimit, 'this merchant account', what);
    if (this.total + bytes > this.processLimit)
      throw full('FORWARD_MAX_INFLIGHT_BYTES', this.processLimit, 'all merchant accounts', what);
    this.perMerchant.set(merchantAccountId, merchant + bytes);
    this.total += bytes;
  }

  /** @internal through InflightLease only */
  give(merchantAccountId: string, bytes: number): void {
    this.total -= bytes;
    const left = (this.perMerchant.get(merchantAccountId) ?? 0) - bytes;
    if (left > 0) this.perMerchant.set(merchantAccountId, left);
    else this.perMerchant.delete(merchantAccountId);
  }
}

function full(variable: string, limit: number, whose: string, what: ProblemFieldError): ProblemException {
  return new ProblemException(
    OutboundErrors.capacityExceeded,
    `Forwards in flight in this API process already hold the bytes ${variable} allows for ${whose} (${limit}); ` +
      `nothing was sent. Retry after ${CAPACITY_RETRY_AFTER_SECONDS} s.`,
    [what],
    { 'retry-after': String(CAPACITY_RETRY_AFTER_SECONDS) },
  );
}

/**
 * What one forward holds. Bytes are taken as they are held (request body chunks as they arrive,
 * the filled body before it is built) and all given back at once by `release`, which counts only
 * its first call, so every ending can call it.
 */
export class InflightLease {
  private merchantAccountId: string | null = null;
  private held = 0;
  private released = false;

  constructor(private readonly pool: InflightBytes) {}

  /** Set once the caller is authenticated, before anything is taken. */
  forMerchant(merchantAccountId: string): this {
    this.merchantAccountId = merchantAccountId;
    return this;
  }

  /** Takes `bytes` or throws 503 forward-capacity-exceeded naming `what` (the body, usually). */
  take(bytes: number, what: ProblemFieldError): void {
    if (this.released || this.merchantAccountId === null) throw new Error('lease not bound or already released'); // a bug
    if (bytes <= 0) return;
    this.pool.take(this.merchantAccountId, bytes, what);
    this.held += bytes;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.merchantAccountId !== null && this.held > 0) this.pool.give(this.merchantAccountId, this.held);
    this.held = 0;
  }
}
