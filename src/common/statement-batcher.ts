import { isDatabaseUnavailable } from '../database/errors';

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
}

/**
 * Group commit for a hot statement: a call made while a batch is in flight joins the next batch, so
 * under load N callers cost one round trip and one commit instead of N, and with no load a call runs
 * at once (no timer, no added latency). One batch in flight at a time, as the forward records'
 * disclosures do (src/forwarding/forward-records.service.ts), which measured best there.
 */
export class StatementBatcher<I, O> {
  private waiting: Array<{ item: I; resolve(value: O): void; reject(error: unknown): void }> = [];
  private inFlight = false;
  private readonly maxBatch: number;

  constructor(private readonly options: StatementBatcherOptions<I, O>) {
    this.maxBatch = options.maxBatch ?? 200;
  }

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.inFlight || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, this.maxBatch);
    this.inFlight = true;
    void this.execute(batch).finally(() => {
      this.inFlight = false;
      this.next();
    });
  }

  private async execute(
    batch: Array<{ item: I; resolve(value: O): void; reject(error: unknown): void }>,
  ): Promise<void> {
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
