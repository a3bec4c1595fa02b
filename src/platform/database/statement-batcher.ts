import { isDatabaseUnavailable } from '../problem/database-errors';

export interface StatementBatcherOptions<I, O> {
  /** One statement for many items; returns one result per item, in order. */
  many(items: I[]): Promise<O[]>;
  /**
   * The same for one item. A batch that fails for another reason than an outage (one item breaking a
   * constraint, say) is run again item by item, so one bad item fails alone.
   */
  one(item: I): Promise<O>;
  /** Items per statement at most. */
  maxBatch?: number;
  /** Errors that fail the whole batch without a retry item by item (default: the database unavailable). */
  isOutage?: (error: unknown) => boolean;
  /**
   * Unset (group commit): a batch starts as soon as none is in flight. Set: a batch waits up to this
   * long after its first item for others, unless maxBatch fill it first; for writes nobody waits on,
   * where fewer, larger statements are worth a short delay (the forward records' outcomes).
   */
  maxDelayMs?: number;
}

interface Entry<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

const ignore = () => undefined;

/**
 * Group commit for a hot statement: a call made while a batch is in flight joins the next batch, so
 * under load N callers cost one round trip and one commit instead of N, and with no load a call runs
 * at once (no timer, no added latency). One batch in flight at a time, which measured best for the
 * forward records' disclosures (src/modules/forwarding/records/forward-records.service.ts). With maxDelayMs, the
 * same one-at-a-time batches, started by size or by delay instead.
 */
export class StatementBatcher<I, O> {
  private waiting: Array<Entry<I, O>> = [];
  private inFlight: Promise<void> | null = null;
  /** Items at the front of `waiting` that go without waiting for maxDelayMs (flushed, or their delay is over). */
  private due = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly maxBatch: number;

  constructor(private readonly options: StatementBatcherOptions<I, O>) {
    this.maxBatch = options.maxBatch ?? 200;
  }

  /** Items waiting for a batch (not those in flight). */
  get size(): number {
    return this.waiting.length;
  }

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  /** Adds an item nobody waits for: what becomes of it is the `many` and `one` functions' business. */
  submit(item: I): void {
    this.waiting.push({ item, resolve: ignore, reject: ignore });
    this.next();
  }

  /**
   * Puts items back, ahead of those still within their delay, to run again in `afterMs` at the
   * earliest (with the next batch then, or the next flush). Behind the items a flush is sending, so a
   * flush never loops on items that keep failing.
   */
  retry(items: I[], afterMs: number): void {
    this.waiting.splice(this.due, 0, ...items.map((item) => ({ item, resolve: ignore, reject: ignore })));
    this.schedule(afterMs);
  }

  /** Starts everything waiting now; resolves once it and the batch in flight have run (settled either way). */
  async flush(): Promise<void> {
    const settled = this.waiting.map(
      (entry) =>
        new Promise<void>((done) => {
          const { resolve, reject } = entry;
          entry.resolve = (value) => {
            resolve(value);
            done();
          };
          entry.reject = (error) => {
            reject(error);
            done();
          };
        }),
    );
    const inFlight = this.inFlight;
    this.due = this.waiting.length;
    this.next();
    await Promise.all([inFlight, ...settled]);
  }

  private schedule(afterMs: number): void {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.due = this.waiting.length;
      this.next();
    }, afterMs);
  }

  private next(): void {
    if (this.waiting.length === 0) return;
    const delay = this.options.maxDelayMs;
    const waitMore = delay !== undefined && this.due === 0 && this.waiting.length < this.maxBatch;
    // The delay runs from the first item even while a batch is in flight, not from that batch's end.
    if (waitMore) this.schedule(delay);
    if (this.inFlight || waitMore) return;
    const batch = this.waiting.splice(0, this.maxBatch);
    this.due = Math.max(0, this.due - batch.length);
    if (this.waiting.length === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.inFlight = this.execute(batch).finally(() => {
      this.inFlight = null;
      this.next();
    });
  }

  private async execute(batch: Array<Entry<I, O>>): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.options.one(only.item).then(
        (value) => only.resolve(value),
        (error: unknown) => only.reject(error),
      );
      return;
    }
    try {
      const results = await this.options.many(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index]));
    } catch (error) {
      if ((this.options.isOutage ?? isDatabaseUnavailable)(error)) {
        batch.forEach((entry) => entry.reject(error));
        return;
      }
      await Promise.all(
        batch.map((entry) =>
          this.options.one(entry.item).then(
            (value) => entry.resolve(value),
            (error: unknown) => entry.reject(error),
          ),
        ),
      );
    }
  }
}

/** A PostgreSQL array literal of text values (for arrays of arrays, which unnest() cannot take): `{"a","b"}`. */
export function textArrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}
