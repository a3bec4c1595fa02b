import { Injectable } from '@nestjs/common';
import { ForwardJobResponse } from './dto/forward-job.dto';
import { ENDED_STATUSES } from './rows/forward-job.entity';
import { ForwardJobsRepository } from './forward-jobs.repository';
import type { CallbackJobSource } from '../callbacks/callback-deliveries';

/** A queued forward's end as its callback carries it: the job resource exactly as GET /vault-forward/jobs/{id} shows it. */
@Injectable()
export class ForwardJobCallbackSource implements CallbackJobSource {
  constructor(private readonly store: ForwardJobsRepository) {}

  async callbackFor(jobId: string): Promise<{ merchantAccountId: string; url: string; resource: unknown } | null> {
    const row = await this.store.findOf(null, jobId);
    if (!row || !row.callbackUrl || !ENDED_STATUSES.includes(row.status)) return null;
    const response = await this.store.openResponse(row);
    return {
      merchantAccountId: row.merchantAccountId,
      url: row.callbackUrl,
      resource: ForwardJobResponse.from(row, response),
    };
  }

  async responseReceived(jobId: string): Promise<void> {
    await this.store.markResponseReceived(jobId);
  }
}
