import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../problem/database-errors';

/**
 * The one owner of a durable write the database could not take for want of being reachable: the write
 * is held by the process that made it and tried again, first after HELD_WRITE_FIRST_MS and then at
 * twice the wait up to HELD_WRITE_MAX_MS, until the database takes it. Held writes are the ones whose
 * loss would be worse than a delay: an answered attempt's end (lost, the attempt would be closed as
 * outcome-unknown and sent again) and the release of an Idempotency-Key a refused request claimed (lost,
 * the caller's retry would get 409 until the claim's lease runs out). Disclosures go further, to a
 * local spool on disk, because they must outlive the process (forwarding/records/, decision 0049),
 * which replays it every second, any process's files included.
 */
export const HELD_WRITE_FIRST_MS = 250;
export const HELD_WRITE_MAX_MS = 5_000;

/** The wait before the next try of a held write, after `previousMs` (0 before the first). */
export function nextHeldWriteWaitMs(previousMs: number): number {
  return previousMs <= 0 ? HELD_WRITE_FIRST_MS : Math.min(previousMs * 2, HELD_WRITE_MAX_MS);
}

/**
 * `write`, awaited until the database takes it: an error that is neither the database away nor
 * `alsoWhen` goes to the caller at once, and so does any error once `stopped()` (the process is
 * shutting down and will not wait).
 */
export async function untilDatabaseTakes<T>(
  write: () => Promise<T>,
  options: { alsoWhen?: (error: unknown) => boolean; stopped?: () => boolean } = {},
): Promise<T> {
  for (let waitMs = nextHeldWriteWaitMs(0); ; waitMs = nextHeldWriteWaitMs(waitMs)) {
    try {
      return await write();
    } catch (error) {
      const away = isDatabaseUnavailable(error) || options.alsoWhen?.(error) === true;
      if (!away || options.stopped?.() === true) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/**
 * Writes nobody waits for, held until the database takes them: `hold(key)` keeps a key, and every
 * pending key goes to `writeAll` in one call per try (a batch, as the database comes back with all of
 * them at once). Bounded: past `max`, the oldest key is dropped, logged, and left to what else ends it
 * (a claim's lease, say).
 */
export class HeldWrites {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private waitMs = 0;
  private closed = false;
  private readonly logger = new Logger('HeldWrites');

  constructor(
    private readonly what: string,
    private readonly writeAll: (keys: string[]) => Promise<void>,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  hold(key: string): void {
    this.closed = false;
    if (this.pending.size >= this.max) {
      const oldest = this.pending.values().next().value!;
      this.pending.delete(oldest);
      this.logger.warn({ msg: 'too many held writes; the oldest is dropped', what: this.what });
    }
    this.pending.add(key);
    this.schedule();
  }

  /**
   * Stops trying (the process is shutting down): what is still held is left to what else ends it, and a
   * try under way is not followed by another. A later hold starts again.
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.waitMs = nextHeldWriteWaitMs(this.waitMs);
    this.timer = setTimeout(() => void this.flush(), this.waitMs).unref();
  }

  private async flush(): Promise<void> {
    const keys = [...this.pending];
    try {
      await this.writeAll(keys);
      for (const key of keys) this.pending.delete(key);
      this.waitMs = 0;
      this.logger.log({ msg: 'held writes taken by the database', what: this.what, count: keys.length });
    } catch (error) {
      this.logger.debug({
        msg: 'held writes not taken; tried again',
        what: this.what,
        error: (error as Error).message,
      });
    }
    this.timer = undefined;
    if (this.pending.size > 0) this.schedule();
  }
}
