import {
  ANSWER_GRACE_SECONDS,
  answerRetentionSeconds,
} from '../../src/modules/forwarding/jobs/forward-job-housekeeping';
import { ForwardJobsRepository } from '../../src/modules/forwarding/jobs/forward-jobs.repository';
import { APP_CONFIG } from '../../src/platform/config/config.module';
import type { AppConfig } from '../../src/platform/config/config';
import { cardNumber } from '../factories/cards';
import { createForwardingMerchant, ForwardingMerchant } from '../factories/forwarding-merchants';
import {
  queuedForwardEnv,
  startScriptedDownstream,
  startWorker,
  stopQueuedSetup,
  WorkerProcess,
  ScriptedDownstream,
} from '../support/forward-jobs';
import { expectProblem, http } from '../support/http';
import { createIsolatedDatabase, IsolatedDatabase } from '../support/isolated-database';
import { keysAndValues } from '../support/redis-keys';
import { dataDump, logStrings } from '../support/sink-texts';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * Decision 0139 (issue 45, items 2 and 6): a queued forward's request is erased when it ends, its answer once
 * the merchant has had it (plus a grace) or after FORWARD_JOB_ANSWER_RETENTION; an Idempotency-Key is kept
 * only as a keyed hash, so a card number used as one is nowhere in clear. Time is driven as the other
 * housekeeping tests drive it: the rows' timestamps moved back, then the purge run.
 */
describe('Answers kept only while needed; Idempotency-Keys kept as keyed hashes', () => {
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: ScriptedDownstream;
  let merchant: ForwardingMerchant;
  /** A card number (Luhn-valid) the caller uses as its Idempotency-Key. */
  const keyNumber = cardNumber('5', 16);

  beforeAll(async () => {
    // A database of its own: pg_dump reads only what this file wrote.
    database = await createIsolatedDatabase('answers_kept');
    env = { ...queuedForwardEnv('test-answers-kept'), DATABASE_URL: database.url };
    downstream = await startScriptedDownstream();
    t = await startTestApp({ env });
    worker = await startWorker(env);
    merchant = await createForwardingMerchant(t, downstream.port, 'Answers kept', ['POST', 'PUT']);
  }, 120_000);

  afterAll(async () => {
    await stopQueuedSetup({ env, worker, t, downstream });
    await database?.drop();
  }, 60_000);

  const queue = (path: string, body: string, key?: string, method = 'POST') =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': method,
        'x-vault-forward-payment-methods': merchant.card.id,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      rawBody: body,
    });

  const forwardNow = (path: string, body: string, key: string) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token: merchant.token,
      headers: {
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': 'POST',
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      rawBody: body,
    });

  /** Waits for the job's end by its row, without reading it through the API (a read counts as received). */
  const endedRow = (id: string) =>
    waitFor(
      async () => {
        const [row] = await t.db.query<Array<{ status: string }>>(
          `SELECT status FROM vault_forward_jobs WHERE id = $1`,
          [id],
        );
        return ['succeeded', 'failed', 'cancelled'].includes(row?.status ?? '') && row;
      },
      { timeoutMs: 20_000, what: `job ${id} to end` },
    );

  const plans = async (id: string) =>
    (await t.db.query(`SELECT 1 FROM vault_forward_job_plans WHERE job_id = $1`, [id])).length;
  const answers = async (id: string) =>
    (await t.db.query(`SELECT 1 FROM vault_forward_job_responses WHERE job_id = $1`, [id])).length;
  const read = async (id: string) =>
    (await http(t.url, `/vault-forward/jobs/${id}`, { token: merchant.token })).body as Record<string, unknown>;
  const purge = () => {
    const config = t.get<AppConfig>(APP_CONFIG);
    return t.get(ForwardJobsRepository).purge(answerRetentionSeconds(config), ANSWER_GRACE_SECONDS);
  };

  it("a job's plan row is gone once it ends: succeeded, and cancelled", async () => {
    downstream.script('/plan-ok', [{ status: 200, body: '{"ok":true}' }]);
    const ok = (await queue('/plan-ok', '{"n":"{{ CARD_NUMBER_1 }}","cvv":"739"}')).body.id as string;
    await endedRow(ok);
    expect(await plans(ok)).toBe(0);

    // A job waiting for its next attempt (the first answered 503, Retry-After 60 s) is cancelled: its plan
    // goes in the cancel's statement.
    downstream.script('/plan-wait', [{ status: 503, headers: { 'retry-after': '60' } }]);
    const waiting = (await queue('/plan-wait', '{"n":"{{ CARD_NUMBER_1 }}"}', undefined, 'PUT')).body.id as string;
    await waitFor(
      async () =>
        (
          await t.db.query<Array<{ status: string; n: number }>>(
            `SELECT status, jsonb_array_length(attempts) AS n FROM vault_forward_jobs WHERE id = $1`,
            [waiting],
          )
        ).some((row) => row.status === 'queued' && row.n === 1),
      { what: 'the job to wait for its second attempt' },
    );
    expect(await plans(waiting)).toBe(1);
    const cancelled = await http(t.url, `/vault-forward/jobs/${waiting}`, { method: 'DELETE', token: merchant.token });
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
    expect(await plans(waiting)).toBe(0);
  });

  it('the answer stays readable until read, then a grace; never read, it goes after the retention', async () => {
    downstream.script('/answer', [{ status: 201, body: '{"answer":"kept a while"}' }]);
    const readJob = (await queue('/answer', '{"n":"{{ CARD_NUMBER_1 }}"}')).body.id as string;
    const unread = (await queue('/answer', '{"n":"{{ CARD_NUMBER_1 }}","u":1}')).body.id as string;
    await endedRow(readJob);
    await endedRow(unread);

    // Before: readable, and read again (a retried GET) within the grace.
    const first = await read(readJob);
    expect(first).toMatchObject({ status: 'succeeded', response_status: 201, response_erased_at: null });
    expect(first.response).toMatchObject({ status: 201, body: '{"answer":"kept a while"}' });
    await purge();
    expect((await read(readJob)).response).toMatchObject({ status: 201 });
    expect(await answers(unread)).toBe(1);

    // The grace over: erased, saying why; status and response_status stay.
    await t.db.query(
      `UPDATE vault_forward_jobs SET response_received_at = response_received_at - make_interval(secs => $2 + 1) WHERE id = $1`,
      [readJob, ANSWER_GRACE_SECONDS],
    );
    await purge();
    expect(await answers(readJob)).toBe(0);
    const after = await read(readJob);
    expect(after).toMatchObject({
      status: 'succeeded',
      response: null,
      response_status: 201,
      response_erased_reason: 'received',
    });
    expect(after.response_erased_at).toEqual(expect.any(String));

    // Never read: kept (the purge leaves it) until FORWARD_JOB_ANSWER_RETENTION (24 h by default) has passed.
    expect(await answers(unread)).toBe(1);
    await t.db.query(`UPDATE vault_forward_jobs SET finished_at = now() - interval '24 hours 1 second' WHERE id = $1`, [
      unread,
    ]);
    await purge();
    expect(await answers(unread)).toBe(0);
    expect(await read(unread)).toMatchObject({
      status: 'succeeded',
      response: null,
      response_status: 201,
      response_erased_reason: 'retention',
    });
  });

  it('a card number as Idempotency-Key: replay and conflict hold, and it is in no row, no log line, no Redis key', async () => {
    // Synchronous: the first sends, the repeat replays, another request with the key is refused.
    const syncKey = `${keyNumber}`;
    const first = await forwardNow('/sync', '{"a":1}', syncKey);
    expect(first.status).toBe(200);
    const again = await forwardNow('/sync', '{"a":1}', syncKey);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expectProblem(await forwardNow('/sync', '{"a":2}', syncKey), 422, 'idempotency-key-reused');
    expect(downstream.requestsTo('/sync')).toHaveLength(1);

    // Queued, with the same digits spelt with spaces: one job, replayed; the key still reaches the target.
    const queuedKey = keyNumber.replace(/(\d{4})(?=\d)/g, '$1 ');
    downstream.script('/queued', [{ status: 200, body: '{"ok":true}' }]);
    const job = await queue('/queued', '{"n":"{{ CARD_NUMBER_1 }}"}', queuedKey);
    expect(job.status).toBe(202);
    const repeat = await queue('/queued', '{"n":"{{ CARD_NUMBER_1 }}"}', queuedKey);
    expect([repeat.status, repeat.body.id]).toEqual([200, job.body.id]);
    expectProblem(
      await queue('/queued', '{"n":"{{ CARD_NUMBER_1 }}","b":2}', queuedKey),
      422,
      'idempotency-key-reused',
    );
    await endedRow(job.body.id as string);
    expect(downstream.requestsTo('/queued').map((r) => r.headers['idempotency-key'])).toEqual([queuedKey]);
    // The job resource does not give the key back: the caller knows it.
    expect(JSON.stringify(await read(job.body.id as string))).not.toContain(keyNumber.slice(0, 6));

    const spellings = [keyNumber, queuedKey, syncKey];
    const [keyRows, jobRows] = await Promise.all([
      t.db.query<Array<{ key: string; key_hashed: boolean }>>(
        `SELECT key, key_hashed FROM vault_forward_idempotency_keys WHERE merchant_account_id = $1`,
        [merchant.id],
      ),
      t.db.query<Array<{ idempotency_key: string | null }>>(
        `SELECT idempotency_key FROM vault_forward_jobs WHERE id = $1`,
        [job.body.id],
      ),
    ]);
    expect(keyRows.length).toBeGreaterThanOrEqual(2);
    for (const row of keyRows)
      expect(row).toEqual({ key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), key_hashed: true });
    expect(jobRows[0].idempotency_key).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const dump = dataDump(database.url);
    const logs = logStrings(t.logs.text + '\n' + worker.output());
    const redisText = (await keysAndValues(`bull:${env.FORWARD_QUEUE_NAME}*`)).map(([, text]) => text).join('\n');
    for (const spelling of spellings) {
      expect(dump).not.toContain(spelling);
      expect(redisText).not.toContain(spelling);
      expect(logs.filter((line) => line.includes(spelling))).toEqual([]);
    }
  });
});
