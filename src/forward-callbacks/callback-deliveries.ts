import { randomInt, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ProblemException } from '../common/problem/problem';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { DownstreamClient } from '../forwarding/downstream-client';
import { hostKey, isInsecureHost } from '../targets/http-methods';
import { boundAad, SecretSealer } from '../vault/secret-sealer';
import { WebhookSigner } from '../webhook-secrets/webhook-signer';

export const DEFAULT_CALLBACK_ATTEMPTS = 8;
const RETRY_CAP_MS = 5 * 60 * 1000;
const CALLBACK_TIMEOUT_MS = 10_000;
/** A claimed delivery whose process died is due again after this. */
const CLAIM_LEASE_SECONDS = 60;
const POLL_EVERY_MS = 1_000;
const BATCH = 32;

/** Whether this process runs the delivery loop (the worker) or only validates and schedules (the API). */
export const CALLBACK_DELIVERY_LOOP = Symbol('CALLBACK_DELIVERY_LOOP');

/**
 * What a job's end looks like to the callback: H10a's job store provides it (the job resource as the
 * API serialises it). `null` when the job has no callback URL or does not exist.
 */
export interface CallbackJobSource {
  callbackFor(jobId: string): Promise<{ merchantAccountId: string; url: string; resource: unknown } | null>;
}
export const CALLBACK_JOB_SOURCE = Symbol('CALLBACK_JOB_SOURCE');

interface DueRow {
  id: string;
  merchant_account_id: string;
  message_id: string;
  url: string;
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
  attempts: number;
  max_attempts: number;
}

/** Full jitter: a random delay in [0, min(cap, base·2^(attempt−1))]. */
export function callbackBackoffMs(attempt: number, baseMs: number, capMs = RETRY_CAP_MS): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return randomInt(0, Math.max(1, Math.floor(ceiling)) + 1);
}

/**
 * Job-end callbacks, delivered at least once from a PostgreSQL outbox. `deliver` (or `schedule` for a
 * job) seals the body and stores a row; the worker's loop claims due rows (FOR UPDATE SKIP LOCKED,
 * with a lease so a killed worker's claims come due again), signs each attempt per Standard Webhooks
 * (same webhook-id on every attempt, fresh timestamp), POSTs it through the forwarding
 * DownstreamClient (the SSRF guard applies) and retries any non-2xx or network failure with full
 * jitter (FORWARD_RETRY_BASE_MS, cap 5 min) up to max_attempts, then marks it failed.
 */
@Injectable()
export class CallbackDeliveries implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Callbacks');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly sealer: SecretSealer,
    private readonly signer: WebhookSigner,
    private readonly downstream: DownstreamClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CALLBACK_DELIVERY_LOOP) private readonly loop: boolean,
    @Optional() @Inject(CALLBACK_JOB_SOURCE) private readonly jobs?: CallbackJobSource,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.loop) return;
    this.timer = setInterval(() => this.kick(), POLL_EVERY_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Stores a callback of `body` (JSON) to `url`, signed for `merchantAccountId`, and wakes the loop.
   * `messageId` is the webhook-id; the same id scheduled twice is delivered once. Returns the id.
   */
  async deliver(
    merchantAccountId: string,
    url: string,
    body: unknown,
    options: { messageId?: string; maxAttempts?: number } = {},
  ): Promise<string> {
    const messageId = options.messageId ?? `msg_${randomUUID().replace(/-/g, '')}`;
    const id = randomUUID();
    const sealed = this.sealer.sealJson(callbackAad(merchantAccountId, id), body);
    await this.dataSource.query(
      `INSERT INTO vault_forward_callback_deliveries
         (id, merchant_account_id, message_id, url, ciphertext, wrapped_key, master_key_id, max_attempts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (message_id) DO NOTHING`,
      [
        id,
        merchantAccountId,
        messageId,
        url,
        sealed.ciphertext,
        sealed.wrappedKey,
        sealed.masterKeyId,
        options.maxAttempts ?? DEFAULT_CALLBACK_ATTEMPTS,
      ],
    );
    this.kick();
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
    // One message per job end: every attempt and every re-schedule of it carries the same webhook-id.
    return this.deliver(callback.merchantAccountId, callback.url, callback.resource, {
      messageId: `job_${jobId.replace(/-/g, '')}`,
    });
  }

  /** Runs every due delivery now (the loop does this every second); resolves when the pass is done. */
  async runDue(): Promise<void> {
    for (;;) {
      const rows = await this.dataSource.query<[DueRow[], number]>(
        `UPDATE vault_forward_callback_deliveries SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
          WHERE id IN (SELECT id FROM vault_forward_callback_deliveries WHERE state = 'pending' AND next_attempt_at <= now()
                        ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING id, merchant_account_id, message_id, url, ciphertext, wrapped_key, master_key_id, attempts, max_attempts`,
        [BATCH, CLAIM_LEASE_SECONDS],
      );
      const due = rows[0];
      await Promise.all(due.map((row) => this.attempt(row)));
      if (due.length < BATCH || this.stopped) return;
    }
  }

  /**
   * Deletes delivered and failed callbacks (their sealed bodies) older than FORWARD_JOB_RETENTION, like
   * the jobs' responses; run by the queued forwards' housekeeping job (ForwardJobProcessor).
   */
  async purgeEnded(): Promise<number> {
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM vault_forward_callback_deliveries WHERE state <> 'pending' AND ended_at < now() - make_interval(secs => $1)`,
      [this.config.forwardJobRetentionSeconds],
    );
    return result[1];
  }

  private kick(): void {
    if (!this.loop || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.runDue().catch((error: unknown) =>
          this.logger.warn(`callback delivery pass failed: ${(error as Error).message}`),
        );
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = null));
  }

  private async attempt(row: DueRow): Promise<void> {
    let status: number | null = null;
    let error: string | null = null;
    try {
      const body = this.sealer.open(
        callbackAad(row.merchant_account_id, row.id),
        { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id },
        `callback delivery ${row.id}`,
      );
      const url = new URL(row.url);
      const signature = await this.signer.signWebhook(row.merchant_account_id, {
        id: row.message_id,
        timestamp: Math.floor(Date.now() / 1000),
        body,
      });
      const response = await this.downstream.send({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'vault-forward-callbacks', ...signature },
        body,
        timeoutMs: CALLBACK_TIMEOUT_MS,
        trusted: url.protocol === 'http:' && isInsecureHost(this.config.forwardInsecureHosts, hostKey(url)),
        identity: null,
      });
      status = response.status;
      // The receiver's answer is not kept: only its status counts.
      if (Buffer.isBuffer(response.body)) response.body.fill(0);
      else response.body.destroy();
    } catch (failure) {
      // Our own messages only (no receiver content, no secret): a problem's detail, or the error's name.
      error = failure instanceof ProblemException ? failure.detail : (failure as Error).name;
    }
    const delivered = status !== null && status >= 200 && status < 300;
    const last = row.attempts >= row.max_attempts;
    const delayMs = callbackBackoffMs(row.attempts, this.config.forwardRetryBaseMs);
    await this.dataSource.query(
      `UPDATE vault_forward_callback_deliveries
          SET state = $2, last_status = $3, last_error = $4,
              next_attempt_at = now() + make_interval(secs => $5::double precision / 1000),
              ended_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
        WHERE id = $1`,
      [row.id, delivered ? 'delivered' : last ? 'failed' : 'pending', status, error, delayMs],
    );
    // A retry due before the next poll is not left waiting for it.
    if (!delivered && !last && delayMs < POLL_EVERY_MS) setTimeout(() => this.kick(), delayMs).unref();
    if (!delivered && last)
      this.logger.warn(
        `callback ${row.message_id} of merchant account ${row.merchant_account_id} failed after ${row.attempts} attempts`,
      );
  }
}

function callbackAad(merchantAccountId: string, id: string): string {
  return boundAad('callback-body', merchantAccountId, id);
}
