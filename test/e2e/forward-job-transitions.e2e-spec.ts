import { randomUUID } from 'node:crypto';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { startTestApp, TestApp } from '../support/test-app';
import { ForwardJobsRepository } from '../../src/modules/forwarding/jobs/forward-jobs.repository';
import type { JobAttempt } from '../../src/modules/forwarding/jobs/rows/forward-job.entity';

/**
 * Every transition of a job row is conditional on its state and on the attempt that owns it (the
 * row's last): a late FINISH or REQUEUE of a superseded attempt, alone or in a batch, changes nothing
 * but that attempt's entry in the history (docs/decisions/0120).
 */
describe('ForwardJobsRepository: conditional transitions', () => {
  let t: TestApp;
  let store: ForwardJobsRepository;
  let merchant: string;

  beforeAll(async () => {
    t = await startTestApp();
    store = t.get(ForwardJobsRepository);
    merchant = (await createMerchantAccount(t)).id;
  });

  afterAll(async () => {
    await t.db.query(`DELETE FROM vault_forward_jobs WHERE merchant_account_id = $1`, [merchant]);
    await t?.close();
  });

  const attempt = (number: number): JobAttempt => ({
    number,
    request_id: randomUUID(),
    started_at: new Date().toISOString(),
    duration_ms: null,
    status: null,
    error_type: null,
    next_attempt_at: null,
  });
  const ended = (entry: JobAttempt, outcome: Partial<JobAttempt>): JobAttempt => ({
    ...entry,
    duration_ms: 12,
    ...outcome,
  });

  /** A queued job row (no plan), claimed at attempt 1: the job and its attempt. */
  async function running() {
    const id = randomUUID();
    await t.db.query(
      `INSERT INTO vault_forward_jobs (id, merchant_account_id, method, target_url, payment_method_ids, authentication_ids, max_attempts)
       VALUES ($1, $2, 'POST', 'http://127.0.0.1:9/x', '{}', '{}', 3)`,
      [id, merchant],
    );
    const first = attempt(1);
    const claimed = await store.claim(id, first);
    expect(claimed?.job.status).toBe('running');
    return { id, first };
  }

  const row = async (id: string) =>
    (
      await t.db.query<Array<{ status: string; attempts: JobAttempt[]; response_status: number | null }>>(
        `SELECT status, attempts, response_status FROM vault_forward_jobs WHERE id = $1`,
        [id],
      )
    )[0];
  const responses = async (id: string) =>
    Number((await t.db.query(`SELECT count(*) AS n FROM vault_forward_job_responses WHERE job_id = $1`, [id]))[0].n);

  /** Attempt 1 closed as outcome-unknown by another worker, and attempt 2 claimed: attempt 1 is superseded. */
  async function takenOver() {
    const { id, first } = await running();
    const closed = ended(first, { error_type: 'outcome-unknown', next_attempt_at: new Date().toISOString() });
    expect(await store.requeue({ id, attempts: [closed] }, first.request_id, closed.next_attempt_at!)).toBe(true);
    const second = attempt(2);
    expect(await store.claim(id, second)).not.toBeNull();
    return { id, first, closed, second };
  }

  it('a late FINISH of a superseded attempt changes nothing; its answer is kept in its own entry only', async () => {
    const { id, first, closed, second } = await takenOver();
    const late = ended(first, { status: 200 });
    const response = { status: 200, headers: {}, body_base64: '' };
    expect(
      await store.finish(
        { id, merchantAccountId: merchant, attempts: [late] },
        first.request_id,
        'succeeded',
        response,
      ),
    ).toBe(false);
    expect(await row(id)).toMatchObject({ status: 'running', response_status: null, attempts: [closed, second] });
    expect(await responses(id)).toBe(0);

    expect(await store.recordLateOutcome(id, late)).toBe(true);
    const after = await row(id);
    expect(after.status).toBe('running');
    // The late answer replaces outcome-unknown; the next attempt that did follow stays named.
    expect(after.attempts[0]).toEqual({ ...late, next_attempt_at: closed.next_attempt_at });
    expect(after.attempts[1]).toEqual(second);
  });

  it('an ended job stays ended: a late FINISH or REQUEUE of its superseded attempt is refused', async () => {
    const { id, first, closed, second } = await takenOver();
    const won = ended(second, { status: 201 });
    expect(
      await store.finish(
        { id, merchantAccountId: merchant, attempts: [closed, won] },
        second.request_id,
        'succeeded',
        null,
      ),
    ).toBe(true);
    const late = ended(first, { status: 409 });
    expect(
      await store.finish({ id, merchantAccountId: merchant, attempts: [late] }, first.request_id, 'failed', null),
    ).toBe(false);
    expect(await store.requeue({ id, attempts: [late] }, first.request_id, new Date().toISOString())).toBe(false);
    // Even its own (owning) attempt cannot end it twice.
    expect(
      await store.finish(
        { id, merchantAccountId: merchant, attempts: [closed, won] },
        second.request_id,
        'failed',
        null,
      ),
    ).toBe(false);
    expect(await row(id)).toMatchObject({ status: 'succeeded', response_status: null, attempts: [closed, won] });
  });

  it('batched FINISHes (FINISH_MANY) apply each item on its own condition', async () => {
    const owned = await running();
    const stale = await takenOver();
    const alsoOwned = await running();
    const finish = (id: string, entry: JobAttempt, attempts: JobAttempt[]) =>
      store.finish({ id, merchantAccountId: merchant, attempts }, entry.request_id, 'succeeded', {
        status: 200,
        headers: {},
        body_base64: '',
      });
    // Called together: the first runs alone, the two after it join one batch.
    const results = await Promise.all([
      finish(owned.id, owned.first, [ended(owned.first, { status: 200 })]),
      finish(stale.id, stale.first, [ended(stale.first, { status: 200 })]),
      finish(alsoOwned.id, alsoOwned.first, [ended(alsoOwned.first, { status: 200 })]),
    ]);
    expect(results).toEqual([true, false, true]);
    expect((await row(stale.id)).status).toBe('running');
    expect(await responses(stale.id)).toBe(0);
    expect((await row(alsoOwned.id)).status).toBe('succeeded');
    expect(await responses(alsoOwned.id)).toBe(1);
  });

  it('a lease is renewed only for the attempt that owns its job, and read only for it', async () => {
    const { id, first, second } = await takenOver();
    expect(await store.renewLeases(new Map([[id, first.request_id]]))).toEqual([id]);
    expect(await store.leaseOf(id, first.request_id)).toBeNull();
    expect(await store.renewLeases(new Map([[id, second.request_id]]))).toEqual([]);
    expect((await store.leaseOf(id, second.request_id))?.remainingMs).toBeGreaterThan(0);
  });
});
