import { Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { withTimeout } from '../time/with-timeout';
import { Metrics, PREFIX } from './metrics.service';

/**
 * How long a scrape waits for a queue's rows: under the 5 s a group's supervisor waits for its processes'
 * figures and Prometheus's default 10 s scrape timeout, so a database that does not answer costs a scrape this
 * much and never fails it.
 */
const COLLECT_TIMEOUT_MS = 2_000;

/** One state of a queue as its rows show it, by the database's clock. */
export interface QueueState {
  state: string;
  depth: number;
  /** Seconds the row longest in this state has been in it (0 when none is): what "in it" means is the reader's. */
  oldestAgeSeconds: number;
  /** Seconds since the oldest row in this state was created. */
  oldestCreatedSeconds: number;
}

interface Watched {
  states: readonly string[];
  read: () => Promise<QueueState[]>;
  /** The read under way, shared by the scrapes that come while it runs. */
  reading: Promise<QueueState[]> | null;
  failing: boolean;
}

/**
 * The queues' gauges (decision 0150): depth and oldest age per state, and the backlog (every row not ended),
 * read from the rows at scrape time, the rows being the truth the API shows whatever the queue engine. The
 * features that own the rows register their reader (`watch`): this folder imports no feature. A read that fails
 * or outlasts COLLECT_TIMEOUT_MS leaves that queue's series out of the scrape and counts one
 * metrics_collect_errors_total{source="queue_<queue>"}: a stale depth would look like a healthy queue.
 */
@Injectable()
export class QueueMetrics {
  private readonly logger = new Logger('Metrics');
  private readonly queues = new Map<string, Watched>();
  private readonly depth: Gauge<'queue' | 'state'>;
  private readonly oldestAge: Gauge<'queue' | 'state'>;
  private readonly backlog: Gauge<'queue'>;
  private readonly backlogAge: Gauge<'queue'>;

  constructor(private readonly metrics: Metrics) {
    // One read of every queue per scrape, which the four gauges' collects all wait for.
    const collect = metrics.sharedRead(async () => {
      await Promise.all([...this.queues].map(([queue, watched]) => this.refresh(queue, watched)));
    });
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Gauge<L>({
        name: `${PREFIX}${name}`,
        help,
        labelNames,
        registers: [metrics.registry],
        // Every process of a group reads the same rows: the group shows them once, not summed.
        aggregator: 'max',
        collect,
      });
    this.depth = gauge('queue_depth', 'Rows of a queue (forward, callback) in each state, read at scrape time.', [
      'queue',
      'state',
    ]);
    this.oldestAge = gauge(
      'queue_oldest_age_seconds',
      'Seconds the oldest row of a queue has been in its state (waiting: since it was due); 0 when none is.',
      ['queue', 'state'],
    );
    this.backlog = gauge('queue_backlog', 'Rows of a queue not ended yet (every state together).', ['queue']);
    this.backlogAge = gauge(
      'queue_backlog_oldest_age_seconds',
      'Seconds since the oldest row of a queue not ended yet was created; 0 when there is none.',
      ['queue'],
    );
  }

  /**
   * Reads `queue`'s rows at each scrape; each of `states` is shown, 0 when no row is in it. A second call for
   * one queue replaces the first (a feature module loaded by both sides of an embedded process).
   */
  watch(queue: string, states: readonly string[], read: () => Promise<QueueState[]>): void {
    this.queues.set(queue, { states, read, reading: null, failing: false });
  }

  private async refresh(queue: string, watched: Watched): Promise<void> {
    // One read per queue at a time: a database that does not answer holds one query, not one per scrape.
    watched.reading ??= watched.read().finally(() => (watched.reading = null));
    let rows: QueueState[];
    try {
      rows = await withTimeout(watched.reading, COLLECT_TIMEOUT_MS);
    } catch (error) {
      for (const state of watched.states) {
        this.depth.remove({ queue, state });
        this.oldestAge.remove({ queue, state });
      }
      this.backlog.remove({ queue });
      this.backlogAge.remove({ queue });
      this.metrics.collectFailed(`queue_${queue}`);
      const reason = error instanceof Error ? error.message : String(error);
      if (!watched.failing) this.logger.warn(`queue ${queue}: rows not read for /metrics (${reason}); left out`);
      watched.failing = true;
      return;
    }
    if (watched.failing) this.logger.log(`queue ${queue}: rows read for /metrics again`);
    watched.failing = false;
    let backlog = 0;
    let backlogAge = 0;
    for (const state of watched.states) {
      const row = rows.find((r) => r.state === state);
      this.depth.set({ queue, state }, row?.depth ?? 0);
      this.oldestAge.set({ queue, state }, row?.oldestAgeSeconds ?? 0);
      backlog += row?.depth ?? 0;
      backlogAge = Math.max(backlogAge, row?.oldestCreatedSeconds ?? 0);
    }
    this.backlog.set({ queue }, backlog);
    this.backlogAge.set({ queue }, backlogAge);
  }
}
