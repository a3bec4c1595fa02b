import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import type { KeysetRequest } from '../../../platform/pagination/keyset';
import { ProblemException } from '../../../platform/problem/problem';
import { isUuid } from '../../../platform/http/uuid';
import {
  CALLBACK_URL_HEADER,
  CRYPTOGRAMS_HEADER,
  headerUrl,
  invalidHeader,
  MAX_ATTEMPTS_HEADER,
  singleHeader,
} from '../request/forward-headers';
import { loggableUrl, recordedUrl } from '../../../platform/logging/redaction';
import { ForwardPlanner } from '../request/forward-planner';
import type { ForwardPlan } from '../request/forward-plan';
import { CallbackDeliveries } from '../callbacks/callback-deliveries';
import { QueuedIdempotency } from '../idempotency/forward-idempotency';
import { idempotencyKeyOf } from '../idempotency/idempotency.service';
import { ForwardQueue, QueueUnavailableError } from '../../../platform/job-queue/forward-queue';
import { ForwardJobResponse, ListForwardJobsQuery } from './dto/forward-job.dto';
import { ForwardJob } from './rows/forward-job.entity';
import { attemptsFrom, ForwardJobsRepository } from './forward-jobs.repository';
import { ForwardJobErrors } from './forward-jobs.errors';

const DEFAULT_MAX_ATTEMPTS = 5;
/** Visible ASCII and space: a key is compared byte for byte and forwarded as a header. */

interface SubmitInput {
  merchantAccountId: string;
  apiKeyId: string | null;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer | undefined;
}

/** The headers only a queued forward reads; on a synchronous one they would be silently ignored, so they are refused. */
export function refuseQueuedOnlyHeaders(headers: IncomingHttpHeaders): void {
  for (const name of [MAX_ATTEMPTS_HEADER, CALLBACK_URL_HEADER]) {
    if (headers[name] !== undefined)
      throw invalidHeader(name, 'applies only to a queued forward (Prefer: respond-async)');
  }
}

/**
 * Queued forwards on the API's side: accepting one (plan as the synchronous path does, store the job
 * with its sealed plan, enqueue its id), and the /vault-forward/jobs resource.
 */
@Injectable()
export class ForwardJobsService {
  private readonly logger = new Logger('ForwardJobs');

  constructor(
    private readonly planner: ForwardPlanner,
    private readonly store: ForwardJobsRepository,
    private readonly queue: ForwardQueue,
    private readonly idempotency: QueuedIdempotency,
    private readonly callbacks: CallbackDeliveries,
  ) {}

  async submit(input: SubmitInput): Promise<{ job: ForwardJobResponse; replayed: boolean }> {
    // A cryptogram is single-use and never stored, not even in a sealed plan (docs/decisions/0100).
    if (input.headers[CRYPTOGRAMS_HEADER] !== undefined)
      throw invalidHeader(
        CRYPTOGRAMS_HEADER,
        'is not accepted on a queued forward: a cryptogram is never stored; the worker asks the token requestor ' +
          '(NETWORK_TOKEN_REQUESTOR_URL) for one per attempt, or send the forward without Prefer: respond-async',
      );
    const maxAttempts = parseMaxAttempts(singleHeader(input.headers, MAX_ATTEMPTS_HEADER));
    // One rule for Idempotency-Key on both paths (src/modules/forwarding/idempotency/).
    const idempotencyKey = idempotencyKeyOf(input.headers) ?? null;
    const rawCallback = singleHeader(input.headers, CALLBACK_URL_HEADER);
    const id = randomUUID();
    const plan = await this.planner.plan({
      merchantAccountId: input.merchantAccountId,
      apiKeyId: input.apiKeyId,
      requestId: id,
      headers: input.headers,
      rawHeaders: input.rawHeaders,
      body: input.body,
    });
    const callbackUrl = rawCallback === undefined ? null : await this.callbackUrl(input.merchantAccountId, rawCallback);
    // Refused before a row exists: nothing to clean up, no CVV written for a job that cannot run.
    if (!this.queue.isAvailable()) throw unavailable(new QueueUnavailableError(this.queue.backend, 'not connected'));

    // Idempotency-Key (src/modules/forwarding/idempotency/): one job per key and request for 24 h; a repeat gets that job back.
    let created: ForwardJob | undefined;
    const { jobId, replayed } = await this.idempotency.around(
      input.merchantAccountId,
      idempotencyKey,
      input.headers,
      input.body,
      async (claim) => {
        created = await this.store.create(
          {
            id,
            merchantAccountId: input.merchantAccountId,
            method: plan.method,
            targetUrl: recordedUrl(plan.url),
            paymentMethodIds: plan.paymentMethodIds,
            authenticationIds: plan.authenticationIds,
            maxAttempts,
            // The row keeps the key's keyed hash; the key itself only travels sealed in the plan (decision 0139).
            idempotencyKeyHash: claim?.keyHash ?? null,
            // As logged: the whole URL, whose query may hold the receiver's token, is kept sealed (below).
            callbackUrl: callbackUrl === null ? null : loggableUrl(callbackUrl),
          },
          withIdempotencyKey(plan, idempotencyKey),
          claim?.id ?? null,
        );
        try {
          if (callbackUrl !== null) await this.callbacks.keepJobCallbackUrl(input.merchantAccountId, id, callbackUrl);
          await this.queue.enqueue(id, attemptsFrom(1, maxAttempts));
        } catch (error) {
          // A 503 means no job: the row (and its sealed plan) must not wait for a worker that will never hear of it.
          await this.store.discard(id).catch((cause: unknown) =>
            this.logger.error({
              msg: 'could not discard a queued forward that was not enqueued',
              job: { id },
              error: (cause as Error).message,
            }),
          );
          throw error instanceof QueueUnavailableError ? unavailable(error) : error;
        }
        return id;
      },
    );
    return {
      job: created && !replayed ? ForwardJobResponse.from(created) : await this.get(input.merchantAccountId, jobId),
      replayed,
    };
  }

  private async callbackUrl(merchantAccountId: string, raw: string): Promise<string> {
    const url = headerUrl(raw, CALLBACK_URL_HEADER);
    await this.planner.checkCallbackUrl(merchantAccountId, url, CALLBACK_URL_HEADER);
    return url.href;
  }

  /**
   * The job as the merchant sees it; an ended job's answer shown here counts as received, from which its
   * grace runs before it is erased (decision 0139).
   */
  async get(merchantAccountId: string, id: string): Promise<ForwardJobResponse> {
    const row = await this.find(merchantAccountId, id);
    const response = row.finishedAt ? await this.store.openResponse(row) : null;
    if (response && row.responseReceivedAt === null) await this.store.markResponseReceived(row.id);
    return ForwardJobResponse.from(row, response);
  }

  /** One page, as `KeysetTable.seekPage` fetches it (up to keyset.limit + 1 rows). */
  list(merchantAccountId: string, query: ListForwardJobsQuery, keyset: KeysetRequest): Promise<ForwardJob[]> {
    return this.store.page(merchantAccountId, query.status, keyset);
  }

  /** Cancels a job waiting for an attempt; its sealed plan goes with it. */
  async cancel(merchantAccountId: string, id: string): Promise<ForwardJobResponse> {
    // Not a UUID: no such job (and PostgreSQL would refuse the comparison with a uuid column).
    if (!isUuid(id)) throw notFound();
    const cancelled = await this.store.cancel(merchantAccountId, id);
    const row = await this.find(merchantAccountId, id);
    if (!cancelled && row.status !== 'cancelled') {
      throw new ProblemException(
        ForwardJobErrors.jobNotCancellable,
        `The job is ${row.status}; only a queued job can be cancelled.`,
      );
    }
    // A cancelled job's callback is delivered too (src/modules/forwarding/callbacks/).
    if (cancelled && row.callbackUrl) await this.callbacks.schedule(row.id);
    return ForwardJobResponse.from(row);
  }

  private async find(merchantAccountId: string, id: string) {
    const row = isUuid(id) ? await this.store.findOf(merchantAccountId, id) : null;
    if (!row) throw notFound();
    return row;
  }
}

/**
 * The caller's Idempotency-Key goes downstream with every attempt, so the target can tell a retry from a new
 * request: it is added to the plan, which is sealed and erased when the job ends, unless the request
 * templates its own Idempotency-Key header.
 */
function withIdempotencyKey(plan: ForwardPlan, key: string | null): ForwardPlan {
  if (key === null || plan.headerTemplates.some(([name]) => name === 'idempotency-key')) return plan;
  return { ...plan, passedHeaders: [...plan.passedHeaders, ['idempotency-key', key] as const] };
}

function notFound(): ProblemException {
  return new ProblemException(
    ForwardJobErrors.jobNotFound,
    'No queued forward with this id exists in this merchant account.',
  );
}

function unavailable(error: QueueUnavailableError): ProblemException {
  return new ProblemException(
    ForwardJobErrors.queueUnavailable,
    error.backend === 'none'
      ? 'Queued forwarding is off in this deployment (QUEUE_BACKEND=none); forward synchronously instead.'
      : 'The job queue is unavailable; no job was kept. Retry later, or forward synchronously.',
    undefined,
    { 'retry-after': String(error.retryAfterSeconds) },
  );
}

function parseMaxAttempts(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_MAX_ATTEMPTS;
  if (!/^\d{1,2}$/.test(raw) || Number(raw) < 1 || Number(raw) > 20)
    throw invalidHeader(MAX_ATTEMPTS_HEADER, 'must be a whole number from 1 to 20');
  return Number(raw);
}
