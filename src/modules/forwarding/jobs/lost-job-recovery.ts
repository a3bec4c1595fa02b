import { Injectable, Logger } from '@nestjs/common';
import { ForwardQueue } from '../../../platform/job-queue/forward-queue';
import { ForwardJobsRepository } from './forward-jobs.repository';

/** Queued jobs read and enqueued again per page (the pages follow each other at once). */
const PAGE = 1_000;

/**
 * Puts back the jobs a queue engine lost with its data (Redis restarted without persistence, flushed, a
 * new server): the job rows are the truth, and every queued one goes back at once instead of once
 * FORWARD_JOB_OVERDUE late and 1,000 per housekeeping pass (docs/decisions/0121). Run by the worker's
 * housekeeping, first thing in every pass.
 */
@Injectable()
export class LostJobRecovery {
  private readonly logger = new Logger('ForwardJobs');
  /** The sweep under way in this process, which a reconnect and a scheduled pass then join. */
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: ForwardJobsRepository,
    private readonly queue: ForwardQueue,
  ) {}

  /**
   * When the engine may have lost its jobs, every queued job is enqueued again, due or not (a retry keeps
   * its delay): a page of rows by id after the last one (keyset), one page after another as soon as each
   * is in, until one comes back short; then the engine is marked swept. An add is a no-op for an attempt
   * BullMQ still holds (its id is the job's), and the claim refuses a second run of one
   * that ran. A sweep that fails leaves the mark unset, so the next pass sweeps again. Rejects with the
   * engine or the database unreachable.
   */
  recover(): Promise<void> {
    this.running ??= this.sweep().finally(() => (this.running = null));
    return this.running;
  }

  private async sweep(): Promise<void> {
    if (!(await this.queue.mayHaveLostJobs())) return;
    let count = 0;
    for (let after: string | null = null; ;) {
      const page = await this.store.queuedAfter(after, PAGE);
      await Promise.all(page.map(({ id, delayMs, ...attempts }) => this.queue.enqueue(id, { ...attempts, delayMs })));
      count += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1].id;
    }
    await this.queue.markSwept();
    if (count > 0)
      this.logger.warn({ msg: 'the job queue may have lost its jobs: every queued forward was enqueued again', count });
  }
}
