import { Injectable } from '@nestjs/common';
import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Every series is named vault_forward_*; docs/metrics.md lists them. */
export const PREFIX = 'vault_forward_';

/** Seconds: from a fast 1 ms answer to the longest allowed forward (x-vault-forward-timeout ≤ 60 s). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The process's Prometheus registry. One per application (not prom-client's global one), so several
 * apps in one process (tests) keep their own figures. Features push events here (counters,
 * histograms) or register a gauge whose value is read at scrape time, so nothing is computed on the
 * hot path for a scrape that may never come.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  private readonly forwards: Counter<'status_class' | 'error_type'>;
  private readonly forwardSeconds: Histogram<'part'>;
  private readonly cacheLookupsTotal: Counter<'cache' | 'result'>;
  private readonly keyStoreSeconds: Histogram<'operation' | 'outcome'>;
  private readonly dataKeyUnwraps: Counter<'source'>;
  private readonly keyRotations: Counter<'table'>;
  private readonly budgetRefusals: Counter<'scope' | 'limit'>;
  private readonly secureFieldsSubmissions: Counter<'outcome'>;
  private readonly collectErrors: Counter<'source'>;
  /** The scrape-time reads (sharedRead): the errors counter waits for them, so a scrape counts its own failures. */
  private readonly scrapeReads: Array<() => Promise<void>> = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    // In a group of processes the supervisor asks each one for these figures and sums them (app/bootstrap/processes.ts).
    // prom-client answers those requests only once an AggregatorRegistry exists in the process.
    if (cluster.isWorker) {
      AggregatorRegistry.setRegistries([this.registry]);
      new AggregatorRegistry();
    }
    this.forwards = new Counter({
      name: `${PREFIX}forwards_total`,
      help:
        'Forwards finished, by the status the caller got (2xx…5xx, or "none" when the caller left first) and by ' +
        'problem type ("none" when the downstream answered and its answer went through whole).',
      labelNames: ['status_class', 'error_type'],
      registers: [this.registry],
    });
    this.forwardSeconds = new Histogram({
      name: `${PREFIX}forward_duration_seconds`,
      help:
        'Forward latency: part="total" is the whole forward as the service saw it (ours plus the downstream), ' +
        'part="downstream" from sending the request to the downstream answer\'s headers.',
      labelNames: ['part'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.cacheLookupsTotal = new Counter({
      name: `${PREFIX}cache_lookups_total`,
      help: 'Lookups in the per-process hot-path caches (SharedCache), by cache and result.',
      labelNames: ['cache', 'result'],
      registers: [this.registry],
    });
    this.keyStoreSeconds = new Histogram({
      name: `${PREFIX}key_store_duration_seconds`,
      help:
        'Calls into the vault key store (VAULT_KEY_PROVIDER=pkcs11): operation wrap, unwrap or connect; outcome ok, ' +
        'or error when the token did not answer (each error is also logged).',
      labelNames: ['operation', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.dataKeyUnwraps = new Counter({
      name: `${PREFIX}data_key_unwraps_total`,
      help: 'Data keys unwrapped under a PKCS#11 master key, by source: the in-memory cache or the key store.',
      labelNames: ['source'],
      registers: [this.registry],
    });
    this.keyRotations = new Counter({
      name: `${PREFIX}key_rotation_rows_total`,
      help:
        'Rows re-wrapped under the current master key, by table, in this process only (`vault rotate-keys` runs in the ' +
        'CLI, which prints and logs its counts instead).',
      labelNames: ['table'],
      registers: [this.registry],
    });
    this.budgetRefusals = new Counter({
      name: `${PREFIX}disclosure_budget_refusals_total`,
      help:
        'Forwards refused by a disclosure budget (decision 0134), by scope (merchant or config) and by the limit ' +
        'reached (distinct_cards or disclosures_per_card).',
      labelNames: ['scope', 'limit'],
      registers: [this.registry],
    });
    this.secureFieldsSubmissions = new Counter({
      name: `${PREFIX}secure_fields_submissions_total`,
      help:
        'Card submissions from the Secure Fields frames (decision 0140), by outcome: collected, invalid, ' +
        'not_found, expired, origin_refused, too_many_tries or error.',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.collectErrors = new Counter({
      name: `${PREFIX}metrics_collect_errors_total`,
      help:
        'Figures a scrape could not read (the database away or slower than the bound), by source: the scrape ' +
        'still answers, without those series (queue gauges) or with their last value (the other gauges).',
      labelNames: ['source'],
      registers: [this.registry],
      collect: async () => {
        await Promise.all(this.scrapeReads.map((read) => read()));
      },
    });
  }

  /** A scrape-time figure of `source` could not be read: the scrape answers without it. */
  collectFailed(source: string): void {
    this.collectErrors.inc({ source });
  }

  /**
   * `read` once per scrape however many series wait for it (their collects call what this returns), and before
   * metrics_collect_errors_total is written. `read` must not reject: it counts its own failures (collectFailed).
   */
  sharedRead(read: () => Promise<void>): () => Promise<void> {
    let pending: Promise<void> | null = null;
    const shared = () => (pending ??= read().finally(() => (pending = null)));
    this.scrapeReads.push(shared);
    return shared;
  }

  /** A card submitted from the Secure Fields (decision 0140), by outcome (`collected`, or why it was refused). */
  secureFieldsSubmitted(outcome: string): void {
    this.secureFieldsSubmissions.inc({ outcome });
  }

  /** A forward refused by a disclosure budget: nothing was sent. */
  disclosureBudgetRefused(scope: 'merchant' | 'config', limit: 'distinct_cards' | 'disclosures_per_card'): void {
    this.budgetRefusals.inc({ scope, limit });
  }

  /** A call into the vault's key store (the PKCS#11 token): its latency, and whether the token answered. */
  keyStoreCall(operation: string, seconds: number, ok: boolean): void {
    this.keyStoreSeconds.observe({ operation, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** A data key unwrapped, from the cache or by the key store (an audited key use). */
  dataKeyUnwrapped(cached: boolean): void {
    this.dataKeyUnwraps.inc({ source: cached ? 'cache' : 'key_store' });
  }

  rowsRewrapped(table: string, rows: number): void {
    this.keyRotations.inc({ table }, rows);
  }

  forwardFinished(status: number | null, errorType: string | null, seconds: number): void {
    const statusClass = status === null ? 'none' : `${Math.floor(status / 100)}xx`;
    this.forwards.inc({ status_class: statusClass, error_type: errorType ?? 'none' });
    this.forwardSeconds.observe({ part: 'total' }, seconds);
  }

  downstreamAnswered(seconds: number): void {
    this.forwardSeconds.observe({ part: 'downstream' }, seconds);
  }

  /** The hit/miss counter of one cache, its label children bound once: a lookup costs one increment. */
  cacheLookups(cache: string): (hit: boolean) => void {
    const hits = this.cacheLookupsTotal.labels({ cache, result: 'hit' });
    const misses = this.cacheLookupsTotal.labels({ cache, result: 'miss' });
    return (hit) => (hit ? hits.inc() : misses.inc());
  }

  /**
   * A gauge read when Prometheus scrapes; `read` must be cheap, and a failure leaves the last value (counted in
   * metrics_collect_errors_total under the gauge's name).
   */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    let value: number | null = null;
    const refresh = this.sharedRead(async () => {
      try {
        value = await read();
      } catch {
        // A scrape must not fail because one figure could not be read.
        this.collectFailed(name);
      }
    });
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers: [this.registry],
      async collect() {
        await refresh();
        if (value !== null) this.set(value);
      },
    });
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
