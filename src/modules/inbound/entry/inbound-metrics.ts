import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics, PREFIX } from '../../../platform/metrics/metrics.service';
import type { InboundOutcome } from '../records/inbound-request.entity';

/** The inbound routes' figures, in the process's registry (GET /metrics). */
@Injectable()
export class InboundMetrics {
  private readonly requests: Counter<'outcome' | 'recorded'>;
  private readonly cards: Counter<'kind'>;

  constructor(metrics: Metrics) {
    this.requests = new Counter({
      name: `${PREFIX}inbound_requests_total`,
      help:
        'Requests to inbound routes (/vault-inbound/…) by outcome: sent (the upstream answered), refused (ours, 4xx), ' +
        'failed (ours, 5xx); recorded: "false" for those ended before their caller proved itself (an unknown route, ' +
        'method or path, a caller refused), which have no record in /vault-forward/inbound-requests.',
      labelNames: ['outcome', 'recorded'],
      registers: [metrics.registry],
    });
    this.cards = new Counter({
      name: `${PREFIX}inbound_cards_stored_total`,
      help: 'What inbound requests stored: payment methods (one per card a request held) and checkout sessions (one per security code).',
      labelNames: ['kind'],
      registers: [metrics.registry],
    });
  }

  finished(outcome: InboundOutcome, recorded: boolean, paymentMethods: number, checkoutSessions: number): void {
    this.requests.inc({ outcome, recorded: String(recorded) });
    if (paymentMethods > 0) this.cards.inc({ kind: 'payment_method' }, paymentMethods);
    if (checkoutSessions > 0) this.cards.inc({ kind: 'checkout_session' }, checkoutSessions);
  }
}
