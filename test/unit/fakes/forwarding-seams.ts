import type { EnabledConfig } from '../../../src/modules/forwarding-setup/configs/vault-forward-configs.service';
import type { ForwardRecord } from '../../../src/modules/forwarding/records/forward-record';
import type { ForwardRecordsService } from '../../../src/modules/forwarding/records/forward-records.service';
import { ForwardingErrors } from '../../../src/modules/forwarding/request/forwarding.errors';
import type {
  PlaceholderSource,
  PlaceholderSources,
} from '../../../src/modules/forwarding/request/placeholder-sources';
import type { DownstreamClient, DownstreamResponse } from '../../../src/modules/forwarding/sending/downstream-client';
import type { OutboundRequest } from '../../../src/modules/forwarding/sending/outbound-request';
import { paymentMethodsShape, PlaceholderUse } from '../../../src/modules/vault/placeholders/placeholders';
import { serviceUnavailableProblem } from '../../../src/platform/problem/database-errors';
import { ProblemException } from '../../../src/platform/problem/problem';

/**
 * The seams of a forward sent now, in memory: the records' writer, the cards, the downstream and the
 * merchant's configs. The writer and the downstream note what happens on one shared timeline, so a test
 * can tell what came first.
 */
export type ForwardEvent =
  | { kind: 'disclose'; record: ForwardRecord }
  | { kind: 'write'; record: ForwardRecord }
  | { kind: 'send'; request: OutboundRequest };

/** The writer: a disclosure is durable once `disclose` resolves (or refused, when told to fail). */
export class FakeForwardRecords implements Pick<ForwardRecordsService, 'disclose' | 'write'> {
  /** A disclosure neither the table nor the spool could take: the writer's 503. */
  refuseDisclosures = false;

  constructor(private readonly events: ForwardEvent[]) {}

  disclose(record: ForwardRecord): Promise<void> {
    if (this.refuseDisclosures)
      return Promise.reject(serviceUnavailableProblem('The forward could not be recorded; nothing was sent.'));
    record.disclosed = true;
    this.events.push({ kind: 'disclose', record: { ...record } });
    return Promise.resolve();
  }

  write(record: ForwardRecord): void {
    this.events.push({ kind: 'write', record: { ...record } });
  }
}

/** The target: each send answers with the next scripted answer or error. */
export class FakeDownstream implements Pick<DownstreamClient, 'send'> {
  private readonly script: Array<DownstreamResponse | { error: unknown }> = [];

  constructor(private readonly events: ForwardEvent[]) {}

  answer(...outcomes: Array<DownstreamResponse | { error: unknown }>): this {
    this.script.push(...outcomes);
    return this;
  }

  async send(request: OutboundRequest): Promise<DownstreamResponse> {
    this.events.push({ kind: 'send', request });
    const next = this.script.shift();
    if (!next) throw new Error('the fake downstream has no answer scripted for this send');
    if ('error' in next) throw next.error;
    return next;
  }
}

/** Stored cards by payment method id: their numbers (what a test expects to see filled). */
export class FakePlaceholderSources implements Pick<PlaceholderSources, 'for'> {
  constructor(private readonly cards: ReadonlyMap<string, string>) {}

  for(refs: { paymentMethodIds: readonly string[] }): PlaceholderSource {
    const ids = refs.paymentMethodIds;
    const number = (use: PlaceholderUse) => this.cards.get(ids[use.position - 1]);
    return {
      shape: paymentMethodsShape(ids.length),
      discloses: ids.length > 0,
      check: (_merchant, uses) => {
        const missing = uses.find((use) => number(use) === undefined);
        return missing
          ? Promise.reject(
              new ProblemException(ForwardingErrors.unknownPaymentMethod, `No card at position ${missing.position}.`),
            )
          : Promise.resolve();
      },
      // Each card's number stands in for its fingerprint.
      fingerprints: () => Promise.resolve(ids.map((id) => this.cards.get(id) ?? id)),
      values: (_merchant, uses) => Promise.resolve(new Map(uses.map((use) => [use.token, number(use) ?? '']))),
      answered: () => Promise.resolve(),
      abandoned: () => Promise.resolve(),
    };
  }
}

/** One enabled config for `host`, `methods` on it, answers passed back as they come, no body recorded. */
export function enabledConfig(host: string, methods: string[]): EnabledConfig {
  return {
    id: 'config-1',
    hosts: new Set([host]),
    methods: new Set(methods),
    responseRules: [],
    unmatchedPan: 'pass',
    recordBodiesDays: 0,
  };
}
