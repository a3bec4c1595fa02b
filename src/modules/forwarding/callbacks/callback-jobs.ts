import { randomBytes } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import { keyStoreOutageDelayMs, putOffDelay } from '../../../platform/job-queue/backoff';
import { CALLBACK_JOB_NAME, ForwardQueue } from '../../../platform/job-queue/forward-queue';
import { VaultKeyUnavailableError } from '../../vault/vault.errors';

/**
 * A delivery's next attempt, as its row says, and its attempts left from there: the delivery's one
 * BullMQ job (its id the row's) starts at that attempt and owns the rest.
 */
export interface DueDelivery {
  id: string;
  attempt: number;
  attempts: number;
}

/**
 * Enqueues job-end callback attempts (CALLBACK_JOB_NAME) on their own queue (CALLBACK_QUEUE). The delivery row is
 * the durable record: an enqueue that fails (the engine down, or QUEUE_BACKEND=none) is logged and
 * left to the housekeeping, which enqueues pending deliveries overdue for their attempt again
 * (CallbackDeliveries.sweep), so an outage delays a callback and never loses it.
 * Returns how many were enqueued.
 */
export async function enqueueDeliveries(
  queue: ForwardQueue | null | undefined,
  due: DueDelivery[],
  logger: Logger,
  options: { replaceFailed?: boolean; wake?: boolean } = {},
): Promise<number> {
  if (!queue || queue.backend === 'none' || due.length === 0) return 0;
  // A wake-up's job has an id of its own: the try that put the delivery off may still be finishing
  // under the delivery's id, and an add of that id would be a no-op (EnqueueOptions.copy).
  const copy = options.wake ? `w${randomBytes(6).toString('hex')}` : undefined;
  const results = await Promise.allSettled(
    due.map((delivery) =>
      queue.enqueue(delivery.id, {
        name: CALLBACK_JOB_NAME,
        attempt: delivery.attempt,
        attempts: delivery.attempts,
        replaceFailed: options.replaceFailed,
        copy,
      }),
    ),
  );
  const failed = results.filter((result) => result.status === 'rejected');
  if (failed.length > 0)
    logger.warn({
      msg: 'callback deliveries could not be enqueued; the housekeeping enqueues them once the queue is back',
      count: failed.length,
      error: (failed[0].reason as Error).message,
    });
  return due.length - failed.length;
}

/**
 * The put-off of a forward's or a callback's try: the vault's key store away is no try either (the
 * attempt or claim was given back before anything was sent), 2–4 s; else putOffDelay's.
 */
export function putOffOrKeyStore(error: unknown): number | null {
  return error instanceof VaultKeyUnavailableError ? keyStoreOutageDelayMs() : putOffDelay(error);
}
