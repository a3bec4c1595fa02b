import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { boundAad, SecretSealer } from '../vault/secret-sealer';
import { deserializePlan, ForwardPlan, serializePlan } from '../forwarding/forward-plan';
import { ForwardJob } from './forward-job.entity';

/** A finished job's answer as stored (sealed) and shown. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body_base64: string;
}

export interface NewJob {
  id: string;
  merchantAccountId: string;
  method: string;
  targetUrl: string;
  paymentMethodIds: readonly string[];
  authenticationIds: readonly string[];
  maxAttempts: number;
  idempotencyKey: string | null;
  callbackUrl: string | null;
}

const planAad = (merchantAccountId: string, jobId: string) => boundAad('forward-job-plan', merchantAccountId, jobId);
const responseAad = (merchantAccountId: string, jobId: string) => boundAad('forward-job-response', merchantAccountId, jobId);

/**
 * Job rows and their sealed parts. The plan (literal CVVs, forwarded header values) and the response
 * are sealed before they reach PostgreSQL, each bound to its merchant and job (a blob moved to another
 * row does not open), and rotate with `vault rotate-keys` (SEALED_TABLES).
 */
@Injectable()
export class ForwardJobStore {
  constructor(
    @InjectRepository(ForwardJob) readonly jobs: Repository<ForwardJob>,
    private readonly dataSource: DataSource,
    private readonly sealer: SecretSealer,
  ) {}

  /** The row and its sealed plan, in one transaction. */
  async create(job: NewJob, plan: ForwardPlan): Promise<ForwardJob> {
    const text = Buffer.from(serializePlan(plan), 'utf8');
    let sealed;
    try {
      sealed = this.sealer.seal(planAad(job.merchantAccountId, job.id), text);
    } finally {
      text.fill(0);
    }
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO vault_forward_jobs (id, merchant_account_id, method, target_url, payment_method_ids, authentication_ids, max_attempts, idempotency_key, callback_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [job.id, job.merchantAccountId, job.method, job.targetUrl, job.paymentMethodIds, job.authenticationIds, job.maxAttempts, job.idempotencyKey, job.callbackUrl],
      );
      await manager.query(`INSERT INTO vault_forward_job_plans (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id) VALUES ($1, $2, $3, $4, $5)`, [
        job.id,
        job.merchantAccountId,
        sealed.ciphertext,
        sealed.wrappedKey,
        sealed.masterKeyId,
      ]);
    });
    return this.jobs.findOneByOrFail({ id: job.id });
  }

  /** A job that could not be enqueued: it never existed for the caller (503). */
  async discard(jobId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM vault_forward_jobs WHERE id = $1`, [jobId]);
  }

  /** The job's plan, or null once it is gone (the job ended). */
  async openPlan(job: Pick<ForwardJob, 'id' | 'merchantAccountId'>, manager: EntityManager = this.dataSource.manager): Promise<ForwardPlan | null> {
    const rows = (await manager.query(`SELECT ciphertext, wrapped_key, master_key_id FROM vault_forward_job_plans WHERE job_id = $1`, [job.id])) as SealedRow[];
    if (rows.length === 0) return null;
    const text = this.sealer.open(planAad(job.merchantAccountId, job.id), sealedRecord(rows[0]), `plan of queued forward ${job.id}`);
    try {
      return deserializePlan(text);
    } finally {
      text.fill(0);
    }
  }

  async storeResponse(job: Pick<ForwardJob, 'id' | 'merchantAccountId'>, response: StoredResponse, manager: EntityManager): Promise<void> {
    const sealed = this.sealer.sealJson(responseAad(job.merchantAccountId, job.id), response);
    await manager.query(
      `INSERT INTO vault_forward_job_responses (job_id, merchant_account_id, ciphertext, wrapped_key, master_key_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (job_id) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, wrapped_key = EXCLUDED.wrapped_key, master_key_id = EXCLUDED.master_key_id`,
      [job.id, job.merchantAccountId, sealed.ciphertext, sealed.wrappedKey, sealed.masterKeyId],
    );
  }

  /** The stored answer of a finished job, or null (none, or purged after FORWARD_JOB_RETENTION). */
  async openResponse(job: Pick<ForwardJob, 'id' | 'merchantAccountId'>): Promise<StoredResponse | null> {
    const rows = (await this.dataSource.query(`SELECT ciphertext, wrapped_key, master_key_id FROM vault_forward_job_responses WHERE job_id = $1`, [
      job.id,
    ])) as SealedRow[];
    if (rows.length === 0) return null;
    return this.sealer.openJson<StoredResponse>(responseAad(job.merchantAccountId, job.id), sealedRecord(rows[0]), `response of queued forward ${job.id}`);
  }

  /**
   * Deletes the sealed responses of jobs that ended more than `retentionSeconds` ago, and any plan
   * an ended job still has. Returns how many sealed rows went.
   */
  async purge(retentionSeconds: number): Promise<number> {
    const [, responses] = (await this.dataSource.query(
      `DELETE FROM vault_forward_job_responses r USING vault_forward_jobs j
        WHERE r.job_id = j.id AND j.finished_at < now() - make_interval(secs => $1)`,
      [retentionSeconds],
    )) as [unknown, number];
    const [, plans] = (await this.dataSource.query(
      `DELETE FROM vault_forward_job_plans p USING vault_forward_jobs j WHERE p.job_id = j.id AND j.finished_at IS NOT NULL`,
    )) as [unknown, number];
    return responses + plans;
  }
}

interface SealedRow {
  ciphertext: Buffer;
  wrapped_key: Buffer;
  master_key_id: string;
}

function sealedRecord(row: SealedRow) {
  return { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, masterKeyId: row.master_key_id };
}
