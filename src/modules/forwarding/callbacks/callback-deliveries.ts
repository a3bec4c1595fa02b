import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ProblemException } from '../../../platform/problem/problem';
import type { AppConfig } from '../../../platform/config/config';
import { APP_CONFIG } from '../../../platform/config/config.module';
import { backoffMs, PutOff, RetryAttempt } from '../../../platform/job-queue/backoff';
import { DownstreamClient } from '../sending/downstream-client';
import { CALLBACK_QUEUE, ForwardJobData, ForwardQueue } from '../../../platform/job-queue/forward-queue';
import { loggableUrl } from '../../../platform/logging/redaction';
import { checkOutbound } from '../sending/outbound-policy';
import { boundAad, SecretSealer } from '../../vault/secret-sealer';
import { VaultKeyUnavailableError } from '../../vault/vault.errors';
import { NoWebhookSecretError, WebhookSigner } from '../../merchants/webhook-secrets/webhook-signer';
import { WebhookSecretEvents } from '../../merchants/webhook-secrets/webhook-secret-events';
import { enqueueDeliveries } from './callback-jobs';
import { CLOCK, Clock } from '../../../platform/time/clock';
import { CallbackDeliveriesRepository, DueRow } from './callback-deliveries.repository';

const DEFAULT_CALLBACK_ATTEMPTS = 8;
const CALLBACK_TIMEOUT_MS = 10_000;
/**
 * A claimed delivery whose process died is overdue this long after its claim (plus
 * FORWARD_JOB_OVERDUE), when the housekeeping enqueues its next attempt.
 */
const CLAIM_LEASE_SECONDS = 60;
/** Overdue deliveries enqueued again per housekeeping pass at most (the next pass takes the rest). */
const SWEEP_BATCH = 1_000;
/** last_error of a delivery that waits for its merchant account's first webhook secret. */
const WAITING_FOR_SECRET = 'waiting for a webhook signing secret (POST /vault-forward/webhook-secrets)';

/**
 * What a job's end looks like to the callback: H10a's job store provides it (the job resource as the
 * API serialises it). `null` when the job has no callback URL or does not exist.
 */
export interface CallbackJobSource {
  callbackFor(jobId: string): Promise<{ merchantAccountId: string; url: string; resource: unknown } | null>;
  /** The job's callback was delivered: the merchant has its answer (decision 0139). */
  responseReceived(jobId: string): Promise<void>;
}
export const CALLBACK_JOB_SOURCE = Symbol('CALLBACK_JOB_SOURCE');

/**
 * Job-end callbacks, delivered at least once. `deliver` (or `schedule` for a job) seals the body,
 * stores a delivery row (the durable record) and enqueues its one BullMQ job (CALLBACK_JOB_NAME, its id
 * the row's, with max_attempts tries) on the callbacks' own queue, which the worker's
 * CallbackDeliveryProcessor runs through `handle`: it claims the attempt in the row (so an attempt runs
 * once however often it is delivered), signs it per Standard Webhooks (same webhook-id on every
 * attempt, fresh timestamp), POSTs it through the forwarding DownstreamClient (the SSRF guard applies)
 * and, on any non-2xx or network failure, records the attempt and throws RetryAttempt with the retry
 * policy's jittered backoff, which BullMQ schedules the next attempt by, up to max_attempts; then the
 * row is failed. A 410 Gone fails it at once (the handler returns: no BullMQ try follows). Nothing
 * polls: the housekeeping job enqueues again the deliveries whose BullMQ job was lost (Redis lost its
 * data, an enqueue failed, a worker died mid-attempt) from their rows (`sweep`).
 */
@Injectable()
export class CallbackDeliveries {
  private readonly logger = new Logger('Callbacks');

  constructor(
    private readonly rows: CallbackDeliveriesRepository,
    private readonly sealer: SecretSealer,
    private readonly signer: WebhookSigner,
    private readonly downstream: DownstreamClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    secretEvents: WebhookSecretEvents,
    @Optional() @Inject(CALLBACK_QUEUE) private readonly queue?: ForwardQueue,
    @Optional() @Inject(CALLBACK_JOB_SOURCE) private readonly jobs?: CallbackJobSource,
  ) {
    secretEvents.onSecretCreated((manager, merchantAccountId) => this.wakeWaitingFor(manager, merchantAccountId));
  }

  /**
   * A merchant's new secret, in its creating transaction: deliveries put off for want of one
   * (waitForSecret) are due now, and their attempts are enqueued once it commits (or, the queue down,
   * by the housekeeping).
   */
  private async wakeWaitingFor(manager: EntityManager, merchantAccountId: string): Promise<() => Promise<void>> {
    const woken = await this.rows.wakeWaiting(manager, merchantAccountId);
    return async () => {
      await enqueueDeliveries(this.queue, woken, this.logger, { wake: true });
    };
  }

  /**
   * Stores a callback of `body` (JSON) to `url`, signed for `merchantAccountId`, and enqueues its
   * attempt. `messageId` is the webhook-id; the same id scheduled twice is delivered once (the second
   * call only enqueues the stored delivery's due attempt again, a no-op while BullMQ holds it). An
   * enqueue that fails leaves the row to the housekeeping. Returns the id.
   */
  async deliver(
    merchantAccountId: string,
    url: string,
    body: unknown,
    options: { messageId?: string; maxAttempts?: number } = {},
  ): Promise<string> {
    const messageId = options.messageId ?? `msg_${randomUUID().replace(/-/g, '')}`;
    const id = randomUUID();
    // The whole URL travels sealed with the body; the url column holds it as logged (its query may carry a token).
    const sealed = this.sealer.seal(callbackAad(merchantAccountId, id), sealedMessage(url, body));
    await this.rows.insert({
      id,
      merchantAccountId,
      messageId,
      loggedUrl: loggableUrl(url),
      sealed,
      maxAttempts: options.maxAttempts ?? DEFAULT_CALLBACK_ATTEMPTS,
    });
    // The row of this message (ours, or the one stored before), if its next attempt is due.
    const due = await this.rows.dueByMessage(messageId);
    await enqueueDeliveries(this.queue, due, this.logger);
    return messageId;
  }

  /** Called by the worker when a job ends: delivers the job resource to its callback URL, if it has one. */
  async schedule(jobId: string): Promise<string | null> {
    if (!this.jobs)
      throw new Error(
        'no CALLBACK_JOB_SOURCE is provided: the job store must provide it to schedule callbacks by job id',
      );
    const callback = await this.jobs.callbackFor(jobId);
    if (!callback) return null;
    // Jobs created before the URLs were sealed have their whole URL in the job row.
    const url = (await this.jobCallbackUrl(callback.merchantAccountId, jobId)) ?? callback.url;
    // One message per job end: every attempt and every re-schedule of it carries the same webhook-id.
    return this.deliver(callback.merchantAccountId, url, callback.resource, { messageId: jobMessageId(jobId) });
  }

  /**
   * Keeps a queued forward's whole callback URL sealed until its callback is scheduled: the job row
   * holds it as logged, without the query string a receiver's token may sit in.
   */
  async keepJobCallbackUrl(merchantAccountId: string, jobId: string, url: string): Promise<void> {
    const sealed = this.sealer.seal(jobCallbackUrlAad(merchantAccountId, jobId), Buffer.from(url, 'utf8'));
    await this.rows.insertJobCallbackUrl(merchantAccountId, jobId, sealed);
  }

  private async jobCallbackUrl(merchantAccountId: string, jobId: string): Promise<string | null> {
    const row = await this.rows.jobCallbackUrl(merchantAccountId, jobId);
    if (!row) return null;
    return this.sealer
      .open(
        jobCallbackUrlAad(merchantAccountId, jobId),
        { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
        `callback URL of queued forward ${jobId}`,
      )
      .toString('utf8');
  }

  /**
   * Runs attempt `attempt` of delivery `jobId` (CallbackDeliveryProcessor's handler of CALLBACK_JOB_NAME jobs). The
   * claim takes the attempt only if the row waits for exactly it and is not waiting for a secret, so an
   * attempt delivered twice (stalled-job recovery, an enqueue repeated by the housekeeping) sends once;
   * it also leases the row (next_attempt_at), so a worker that dies mid-attempt leaves it overdue.
   * The database unreachable throws, and the processor puts the job off without spending a try; so
   * does the vault's key store away, once the claim is given back (giveBack).
   */
  async handle({ jobId, attempt }: ForwardJobData): Promise<void> {
    const row = await this.rows.claim(jobId, attempt, CLAIM_LEASE_SECONDS);
    if (row) return this.attempt(row);
    // Not claimable: this attempt is the row's already (its outcome recorded, or another worker sending it
    // under the claim's lease); BullMQ counts it now and delivers the next once the row says it is due.
    // Anything else (ended, waiting for a secret) completes the job.
    const dueInMs = await this.rows.untilNextAttempt(jobId, attempt);
    if (dueInMs !== null) throw new RetryAttempt(dueInMs);
  }

  /**
   * Enqueues again the pending deliveries overdue by FORWARD_JOB_OVERDUE for their next attempt: their
   * BullMQ job was lost (Redis lost its data, an enqueue failed, a worker died holding the claim).
   * Run by the housekeeping job; a copy BullMQ keeps as failed is replaced. Returns how many.
   */
  async sweep(): Promise<number> {
    const due = await this.rows.overdue(this.config.forwardJobOverdueSeconds, SWEEP_BATCH);
    return enqueueDeliveries(this.queue, due, this.logger, { replaceFailed: true });
  }

  /**
   * Deletes delivered and failed callbacks (their sealed bodies, which hold a job's answer) once a job's
   * answer would be erased: FORWARD_JOB_ANSWER_RETENTION after they ended, never past FORWARD_JOB_RETENTION
   * (decision 0139); run by the queued forwards' housekeeping job (ForwardJobProcessor), one for both queues.
   */
  async purgeEnded(): Promise<number> {
    const seconds = Math.min(this.config.forwardJobRetentionSeconds, this.config.forwardJobAnswerRetentionSeconds);
    // A delivery still waiting for a secret after the retention will not be wanted any more: failed, with why.
    return this.rows.purge(
      seconds,
      'no webhook signing secret was created within FORWARD_JOB_RETENTION or FORWARD_JOB_ANSWER_RETENTION',
      this.config.forwardJobRetentionSeconds,
    );
  }

  /**
   * Puts off a delivery whose merchant account has no webhook secret yet, without counting the
   * attempt: no receiver could verify an unsigned message, and burning its attempts before the
   * merchant has created a secret would lose it. It waits (next_attempt_at infinity, which no claim
   * takes and no sweep finds) until WebhookSecretsService.create makes it due and enqueues it, or
   * purgeEnded fails it after the retention. Under the secrets' advisory lock, so a secret created meanwhile is either seen here
   * or wakes this row.
   */
  private async waitForSecret(row: DueRow): Promise<void> {
    const due = await this.rows.waitForSecret(row, WAITING_FOR_SECRET);
    // A secret created between the signing and the lock left the row due now, and nothing enqueued it
    // (the creation wakes waiting rows only): this attempt's job is put off and claims it again.
    if (due) throw new SecretCreatedMeanwhile();
    if (row.attempts === 1)
      this.logger.warn(
        `callback ${row.message_id} waits for a webhook signing secret of merchant account ${row.merchant_account_id}`,
      );
  }

  /**
   * An attempt the key store's outage stopped before anything was sent (the message or the webhook
   * secret did not open): the claim is taken back (due now, the lease dropped), so an HSM outage of any
   * length delays the callback without using up its attempts, and the error thrown on has the processor
   * put this attempt's BullMQ job off (putOffOrKeyStore), which claims the same attempt again. Guarded by the
   * attempt, so a claim the sweep has since handed on is not undone. Should the database fail the
   * statement too, the row keeps its claim and lease: the sweep enqueues its next attempt once the
   * lease is FORWARD_JOB_OVERDUE late (one try spent, nothing stranded, nothing sent twice); a
   * statement that committed unanswered leaves it due now, which this job's next run claims.
   */
  private async giveBack(row: DueRow, failure: VaultKeyUnavailableError): Promise<never> {
    await this.rows.giveBack(row, failure.detail);
    throw failure;
  }

  /**
   * A job's callback delivered: its answer's grace starts (decision 0139). Best effort: the delivery
   * stands, and the answer still goes after FORWARD_JOB_ANSWER_RETENTION if this is lost.
   */
  private async jobAnswerReceived(messageId: string): Promise<void> {
    const jobId = jobOfMessage(messageId);
    if (jobId === null || !this.jobs) return;
    await this.jobs.responseReceived(jobId).catch((error: unknown) =>
      this.logger.warn({
        msg: 'could not note that a job-end callback was delivered; its answer is erased after the retention',
        job: { id: jobId },
        error: (error as Error).message,
      }),
    );
  }

  private async attempt(row: DueRow): Promise<void> {
    let status: number | null = null;
    let error: string | null = null;
    let sending = false;
    try {
      const message = openedMessage(
        this.sealer.open(
          callbackAad(row.merchant_account_id, row.id),
          { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
          `callback delivery ${row.id}`,
        ),
      );
      const body = message.body;
      const url = new URL(message.url ?? row.url);
      // The outbound policy of this process now, as for a target: FORWARD_INSECURE_HOSTS may have changed since.
      const trusted = checkOutbound(this.config.forwardInsecureHosts, url, 'The delivery URL', {
        location: 'body',
        name: 'url',
      });
      const signature = await this.signer.signWebhook(row.merchant_account_id, {
        id: row.message_id,
        timestamp: Math.floor(this.clock.epochMs() / 1000),
        body,
      });
      sending = true;
      const response = await this.downstream.send({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'vault-forward-callbacks', ...signature },
        body,
        timeoutMs: CALLBACK_TIMEOUT_MS,
        trusted,
        identity: null,
      });
      status = response.status;
      // The receiver's answer is not kept: only its status counts.
      if (Buffer.isBuffer(response.body)) response.body.fill(0);
      else response.body.destroy();
    } catch (failure) {
      if (failure instanceof NoWebhookSecretError) return this.waitForSecret(row);
      if (failure instanceof VaultKeyUnavailableError && !sending) return this.giveBack(row, failure);
      // Our own messages only (no receiver content, no secret): a problem's detail, or the error's name.
      error = failure instanceof ProblemException ? failure.detail : (failure as Error).name;
    }
    const delivered = status !== null && status >= 200 && status < 300;
    // 410 Gone is the receiver saying the endpoint is gone for good (Standard Webhooks asks senders to
    // stop there); any other answer, 4xx included (a receiver that is misconfigured or mid-deploy
    // gets fixed), is retried.
    const last = row.attempts >= row.max_attempts || status === 410;
    const delayMs = backoffMs(row.attempts, this.config.forwardRetryBaseMs, null);
    const state = delivered ? 'delivered' : last ? 'failed' : 'pending';
    await this.rows.recordOutcome(row.id, { state, status, error, delayMs });
    if (delivered) await this.jobAnswerReceived(row.message_id);
    // BullMQ schedules the next attempt with the same delay (its one backoff strategy), counting this one.
    if (state === 'pending') throw new RetryAttempt(delayMs);
    if (!delivered && last)
      this.logger.warn(
        `callback ${row.message_id} of merchant account ${row.merchant_account_id} failed after ${row.attempts} attempts` +
          (status === 410 ? ' (the receiver answered 410 Gone)' : ''),
      );
  }
}

/** The webhook-id of a job's end: one message per job, whatever schedules it. */
function jobMessageId(jobId: string): string {
  return `job_${jobId.replace(/-/g, '')}`;
}

/** The job a message is the end of (jobMessageId), or null for another message. */
function jobOfMessage(messageId: string): string | null {
  const parts = /^job_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(messageId);
  return parts ? parts.slice(1).join('-') : null;
}

/** A try put off because a webhook secret was created meanwhile runs again this soon: at once, in effect. */
const SECRET_CREATED_RETRY_MS = 100;

/** A delivery's try found no webhook secret, and one was created before it could put itself off: run it again. */
export class SecretCreatedMeanwhile extends PutOff {
  constructor() {
    super(SECRET_CREATED_RETRY_MS, 'a webhook secret was created while the delivery was being put off');
    this.name = 'SecretCreatedMeanwhile';
  }
}

function jobCallbackUrlAad(merchantAccountId: string, jobId: string): string {
  return boundAad('forward-job-callback-url', merchantAccountId, jobId);
}

/**
 * A delivery's sealed plaintext: a NUL, the URL, a newline, then the body's JSON. Rows sealed before
 * (the body's JSON alone, which never starts with a NUL) keep their URL in the url column.
 */
function sealedMessage(url: string, body: unknown): Buffer {
  return Buffer.from(`\0${new URL(url).href}\n${JSON.stringify(body)}`, 'utf8');
}

function openedMessage(plaintext: Buffer): { url: string | null; body: Buffer } {
  if (plaintext[0] !== 0) return { url: null, body: plaintext };
  const newline = plaintext.indexOf(0x0a);
  return { url: plaintext.subarray(1, newline).toString('utf8'), body: plaintext.subarray(newline + 1) };
}

function callbackAad(merchantAccountId: string, id: string): string {
  return boundAad('callback-body', merchantAccountId, id);
}
