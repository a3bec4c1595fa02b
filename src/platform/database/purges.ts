/**
 * The one way a table erases what no one needs any more (idempotency keys, forward record bodies, inbound request
 * bodies): every process runs it on an unref'd timer, in bounded statements (each picks its rows with FOR UPDATE
 * SKIP LOCKED in its repository), so concurrent purges split the rows instead of waiting on one another and a
 * backlog (a lowered retention, a long outage) is worked off over several runs instead of one long one.
 */
interface PurgeBatches {
  /** Rows per statement: short transactions, row locks held briefly. */
  size: number;
  /** Statements per run at most; unbounded when absent. */
  max?: number;
}

/** Runs `step` (one bounded statement: how many rows it changed) until a batch comes back short. */
export async function purgeInBatches(step: (limit: number) => Promise<number>, batches: PurgeBatches): Promise<number> {
  let total = 0;
  for (let batch = 0; batches.max === undefined || batch < batches.max; batch++) {
    const changed = await step(batches.size);
    total += changed;
    if (changed < batches.size) break;
  }
  return total;
}

/** Runs `purge` every `everyMs` until the returned stop is called; a failure is handed to `failed` (tried again at the next run). */
export function everyPurgeInterval(
  everyMs: number,
  purge: () => Promise<unknown>,
  failed: (error: Error) => void,
): () => void {
  const timer = setInterval(() => void purge().catch((error: unknown) => failed(error as Error)), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
