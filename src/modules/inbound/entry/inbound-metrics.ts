import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics, PREFIX } from '../../../platform/metrics/metrics.service';
import type { InboundOutcome } from '../records/inbound-request.entity';

/** The inbound routes' figures, in the process's registry (GET /metrics). */
@Injectable()
export class InboundMetrics {
  private readonly requests: Counter<'outcome'>;
  private readonly cards: Counter<'kind'>;

  constructor(metrics: Metrics) {
    this.requests = new Counter({
      name: `${PREFIX}inbound_requests_total`,
      help:
        'Requests to inbound routes (/vault-inbound/…) by outcome: sent (the upstream answered), refused (ours, 4xx, ' +
        'the caller refused before anything was read included), failed (ours, 5xx).',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    this.cards = new Counter({
      name: `${PREFIX}inbound_cards_stored_total`,
      help: 'What inbound requests stored: payment methods (one per card a request held) and checkout sessions (one per security code).',
      labelNames: ['kind'],
      registers: [metrics.registry],
    });
  }

  finished(outcome: InboundOutcome, paymentMethods: number, checkoutSessions: number): void {
    this.requests.inc({ outcome });
    if (paymentMethods > 0) this.cards.inc({ kind: 'payment_method' }, paymentMethods);
    if (checkoutSessions > 0) this.cards.inc({ kind: 'checkout_session' }, checkoutSessions);
  }
}
