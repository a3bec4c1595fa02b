import { Logger } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { loadConfig } from '../../src/platform/config/config';
import { ProblemException } from '../../src/platform/problem/problem';
import type { ForwardJobData } from '../../src/platform/job-queue/forward-queue';
import { RetryAttempt, retryBackoff } from '../../src/platform/job-queue/backoff';
import type { CallbackDeliveries } from '../../src/modules/forwarding/callbacks/callback-deliveries';
import { ForwardJobProcessor } from '../../src/modules/forwarding/jobs/forward-job.processor';
import type { ForwardJobsRepository } from '../../src/modules/forwarding/jobs/forward-jobs.repository';
import type { ForwardJob } from '../../src/modules/forwarding/jobs/rows/forward-job.entity';
import { JobOwnedElsewhereError } from '../../src/modules/forwarding/jobs/lease-watch';
import type { ForwardJobHousekeeping } from '../../src/modules/forwarding/jobs/forward-job-housekeeping';
import type { ForwardExecutor } from '../../src/modules/forwarding/request/forward-executor';
import { ForwardingErrors } from '../../src/modules/forwarding/request/forwarding.errors';
import { DownstreamProblem } from '../../src/modules/forwarding/sending/downstream-client';
import { FakeClock } from './fakes/clock';
import { FakeForwardExecutor } from './fakes/forward-executor';
import { InMemoryForwardJobsRepository } from './fakes/forward-jobs.repository';
import { FakeForwardQueue } from './fakes/forward-queue';
import { SYSTEM_CLOCK } from '../../src/platform/time/clock';

/**
 * The worker's decisions for one delivery of a queued forward's attempt (docs/decisions/0120), on an
 * in-memory job store whose transitions carry the statements' conditions, a scripted executor, a queue
 * that only keeps what is enqueued, and a clock that moves when told.
 */
describe('ForwardJobProcessor', () => {
  const config = loadConfig({});
  const LEASE_MARGIN_MS = 250;
  let clock: FakeClock;
  let store: InMemoryForwardJobsRepository;
  let executor: FakeForwardExecutor;
  let queue: FakeForwardQueue;
  let scheduled: string[];
  let processor: ForwardJobProcessor;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  beforeEach(() => {
    clock = new FakeClock();
    store = new InMemoryForwardJobsRepository(clock, config.queueLockMs);
    executor = new FakeForwardExecutor();
    queue = new FakeForwardQueue();
    scheduled = [];
    const callbacks = {
      schedule: (jobId: string) => {
        scheduled.push(jobId);
        return Promise.resolve('delivery');
      },
    };
    processor = new ForwardJobProcessor(
      store as unknown as ForwardJobsRepository,
      executor as unknown as ForwardExecutor,
      config,
      SYSTEM_CLOCK,
      callbacks as unknown as CallbackDeliveries,
      {} as ForwardJobHousekeeping,
      queue,
    );
  });

  afterEach(() => clock.restore());

  // A job queued before keys were hashed (decision 0139): its key in clear in the row until it ends
  // (new jobs carry it in their sealed plan).
  const keyed = { idempotencyKey: null, legacyIdempotencyKey: 'key-1' } satisfies Partial<ForwardJob>;
  const timedOut = () =>
    new DownstreamProblem(ForwardingErrors.downstreamTimeout, 'The target did not answer in time.', true);

  it('ends a claimed attempt that succeeds: succeeded, its answer kept, the callback scheduled, nothing enqueued', async () => {
    const job = store.add({ ...keyed, callbackUrl: 'https://merchant.example/cb' });
    executor.answer({ status: 201, body: '{"ok":true}' });

    await processor.handle({ jobId: job.id, attempt: 1 });

    const row = store.row(job.id);
    expect(row.status).toBe('succeeded');
    expect(row.attempts).toHaveLength(1);
    expect(row.attempts[0]).toMatchObject({ number: 1, status: 201, error_type: null, next_attempt_at: null });
    expect(store.response(job.id)).toMatchObject({
      status: 201,
      body_base64: Buffer.from('{"ok":true}').toString('base64'),
    });
    expect(scheduled).toEqual([job.id]);
    expect(queue.enqueued).toEqual([]);
    // The caller's key goes downstream with the attempt.
    expect(executor.sent[0].passedHeaders).toContainEqual(['idempotency-key', 'key-1']);
  });

  it('requeues a retryable answer with attempts left, hands BullMQ the same delay (Retry-After), and runs the next one', async () => {
    const job = store.add({ ...keyed, maxAttempts: 3 });
    executor.answer({ status: 503, headers: { 'retry-after': '7' } }, { status: 200 });

    const retry = processor.handle({ jobId: job.id, attempt: 1 });
    await expect(retry).rejects.toBeInstanceOf(RetryAttempt);
    await expect(retry).rejects.toMatchObject({ delayMs: 7_000 });
    // BullMQ's backoff strategy takes the delay the handler decided.
    const thrown = await retry.then(
      () => undefined,
      (error: Error) => error,
    );
    expect(retryBackoff(1_000)(1, 'vault-retry', thrown)).toBe(7_000);

    const row = store.row(job.id);
    expect(row.status).toBe('queued');
    const due = new Date(clock.now() + 7_000).toISOString().replace('Z', '000+00:00');
    expect(row.attempts).toEqual([expect.objectContaining({ number: 1, status: 503, next_attempt_at: due })]);
    expect(row.nextAttemptAt?.toEpochMicros()).toBe(BigInt(clock.now() + 7_000) * 1000n);
    expect(queue.enqueued).toEqual([]);

    clock.advance(7_000);
    await processor.handle({ jobId: job.id, attempt: 2 });
    expect(store.row(job.id)).toMatchObject({ status: 'succeeded', responseStatus: 200 });
    expect(store.row(job.id).attempts.map((a) => a.status)).toEqual([503, 200]);
    expect(executor.sent).toHaveLength(2);
  });

  it('fails a retryable answer when no attempt is left', async () => {
    const job = store.add({ ...keyed, maxAttempts: 1 });
    executor.answer({ status: 503 });

    await processor.handle({ jobId: job.id, attempt: 1 });

    expect(store.row(job.id)).toMatchObject({ status: 'failed', responseStatus: 503 });
    expect(queue.enqueued).toEqual([]);
  });

  it('fails a non-retryable answer or error at once, attempts left or not', async () => {
    const answered = store.add({ ...keyed, maxAttempts: 5 });
    const refused = store.add({ ...keyed, maxAttempts: 5 });
    executor.answer(
      { status: 422 },
      { error: new ProblemException(ForwardingErrors.endpointNotEnabled, 'target.example is not enabled.') },
    );

    await processor.handle({ jobId: answered.id, attempt: 1 });
    await processor.handle({ jobId: refused.id, attempt: 1 });

    expect(store.row(answered.id)).toMatchObject({ status: 'failed', responseStatus: 422 });
    expect(store.row(refused.id)).toMatchObject({ status: 'failed', responseStatus: null });
    expect(store.row(refused.id).attempts[0]).toMatchObject({ status: null, error_type: 'endpoint-not-enabled' });
    expect(queue.enqueued).toEqual([]);
  });

  it('does not resend a keyless POST whose request may have reached the target; a keyed one or a GET goes on', async () => {
    const keyless = store.add({ method: 'POST', idempotencyKey: null });
    const withKey = store.add({ method: 'POST', ...keyed });
    const get = store.add({ method: 'GET', idempotencyKey: null });
    executor.answer({ error: timedOut() }, { error: timedOut() }, { error: timedOut() });

    await processor.handle({ jobId: keyless.id, attempt: 1 });
    for (const job of [withKey, get])
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(RetryAttempt);

    expect(store.row(keyless.id).status).toBe('failed');
    expect(store.row(keyless.id).attempts[0].error_type).toBe('downstream-timeout');
    expect(store.row(withKey.id).status).toBe('queued');
    expect(store.row(get.id).status).toBe('queued');
  });

  it('a request that never left (connection refused) is retried even as a keyless POST', async () => {
    const job = store.add({ method: 'POST', idempotencyKey: null });
    executor.answer({ error: new DownstreamProblem(ForwardingErrors.downstreamUnreachable, 'refused', false) });

    await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(RetryAttempt);

    expect(store.row(job.id).status).toBe('queued');
  });

  describe('a second delivery of an attempt (BullMQ is at least once)', () => {
    it('never claims an attempt the row has recorded: it hands BullMQ the retry, due when the row says', async () => {
      const job = store.add({ ...keyed, maxAttempts: 3 });
      executor.answer({ status: 503, headers: { 'retry-after': '7' } });
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(RetryAttempt);
      clock.advance(2_000);

      // The worker went before BullMQ counted the try: the same attempt is delivered again.
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toMatchObject({
        name: 'RetryAttempt',
        delayMs: 5_000,
      });
      expect(executor.sent).toHaveLength(1);
      expect(store.row(job.id).attempts).toHaveLength(1);
    });

    it("runs the row's next attempt when BullMQ counted a try the row never recorded, once it is due", async () => {
      const job = store.add({ ...keyed, maxAttempts: 3 });
      executor.answer({ status: 503, headers: { 'retry-after': '7' } }, { status: 200 });
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(RetryAttempt);

      // BullMQ's attempt 3 while the row waits for its 2nd, not yet due: put off, no try.
      await expect(processor.handle({ jobId: job.id, attempt: 3 })).rejects.toMatchObject({
        name: 'PutOff',
        delayMs: 7_000,
      });
      clock.advance(7_000);
      await processor.handle({ jobId: job.id, attempt: 3 });

      expect(store.row(job.id)).toMatchObject({ status: 'succeeded' });
      expect(store.row(job.id).attempts.map((a) => [a.number, a.status])).toEqual([
        [1, 503],
        [2, 200],
      ]);
    });
  });

  describe("a delivery of another worker's attempt", () => {
    it('is put off while its lease runs, sending nothing and changing nothing', async () => {
      const job = store.add(keyed);
      const theirs = store.claimElsewhere(job.id);
      clock.advance(4_000);
      const before = store.row(job.id);

      const delivery = processor.handle({ jobId: job.id, attempt: 1 });
      await expect(delivery).rejects.toBeInstanceOf(JobOwnedElsewhereError);
      await expect(delivery).rejects.toMatchObject({ delayMs: config.queueLockMs - 4_000 + LEASE_MARGIN_MS });

      expect(executor.sent).toEqual([]);
      expect(store.row(job.id)).toEqual(before);
      expect(store.row(job.id).attempts).toEqual([theirs]);
      expect(queue.enqueued).toEqual([]);
    });

    it('goes back to the queue delayed by the lease, not counted as a try (retryLater)', async () => {
      const job = store.add(keyed);
      store.claimElsewhere(job.id);
      const moveToDelayed = jest.fn((_at: number, _token?: string) => Promise.resolve());
      const delivered = { name: 'forward', data: { jobId: job.id, attempt: 1 }, attemptsMade: 0, moveToDelayed };

      await expect(processor.process(delivered as unknown as Job<ForwardJobData>, 'token')).rejects.toBeInstanceOf(
        DelayedError,
      );
      expect(moveToDelayed).toHaveBeenCalledWith(clock.now() + config.queueLockMs + LEASE_MARGIN_MS, 'token');
      expect(executor.sent).toEqual([]);
    });

    it('closes it outcome-unknown only once the same lapsed lease stayed lapsed a whole lease period', async () => {
      const job = store.add(keyed);
      store.claimElsewhere(job.id);
      clock.advance(config.queueLockMs + 1);
      // Lapsed, seen for the first time: the owner may be cut off from the database; waited for.
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toMatchObject({
        delayMs: config.queueLockMs + LEASE_MARGIN_MS,
      });
      expect(store.row(job.id).status).toBe('running');

      clock.advance(config.queueLockMs);
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(RetryAttempt);

      // Keyed: sent on by the retry rules, as the next attempt; this delivery itself sends nothing.
      expect(store.row(job.id).status).toBe('queued');
      expect(store.row(job.id).attempts[0]).toMatchObject({ status: null, error_type: 'outcome-unknown' });
      expect(executor.sent).toEqual([]);
    });

    it('ends a keyless POST whose owner is gone failed, outcome-unknown, never resent', async () => {
      const job = store.add({
        method: 'POST',
        idempotencyKey: null,
        maxAttempts: 5,
        callbackUrl: 'https://m.example/cb',
      });
      store.claimElsewhere(job.id);
      clock.advance(config.queueLockMs + 1);
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(JobOwnedElsewhereError);
      clock.advance(config.queueLockMs);

      await processor.handle({ jobId: job.id, attempt: 1 });

      expect(store.row(job.id).status).toBe('failed');
      expect(store.row(job.id).attempts).toEqual([expect.objectContaining({ error_type: 'outcome-unknown' })]);
      expect(queue.enqueued).toEqual([]);
      expect(executor.sent).toEqual([]);
      expect(scheduled).toEqual([job.id]);
    });

    it('is not waited for once a renewed lease shows its owner alive', async () => {
      const job = store.add(keyed);
      const theirs = store.claimElsewhere(job.id);
      clock.advance(config.queueLockMs + 1);
      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toBeInstanceOf(JobOwnedElsewhereError);
      // The owner is back and renews: its lease runs again, so it is no longer taken for gone.
      await store.renewLeases(new Map([[job.id, theirs.request_id]]));
      clock.advance(config.queueLockMs - 1);

      await expect(processor.handle({ jobId: job.id, attempt: 1 })).rejects.toMatchObject({
        delayMs: 1 + LEASE_MARGIN_MS,
      });
      expect(store.row(job.id).attempts).toEqual([theirs]);
    });
  });

  describe('a late answer of a superseded attempt', () => {
    /** Attempt 1 runs here, held in flight, while another worker closes it outcome-unknown and claims attempt 2. */
    async function supersededInFlight(fields: Partial<ForwardJob>) {
      const job = store.add(fields);
      const inFlight = executor.hold();
      const delivery = processor.handle({ jobId: job.id, attempt: 1 });
      await inFlight.sending;
      const ours = store.row(job.id).attempts[0];
      const closed = {
        ...ours,
        duration_ms: 1,
        error_type: 'outcome-unknown',
        next_attempt_at: '2030-01-01T00:00:01.000000+00:00',
      };
      expect(await store.requeue({ id: job.id, attempts: [closed] }, ours.request_id, closed.next_attempt_at)).toBe(
        true,
      );
      const theirs = store.claimElsewhere(job.id);
      return { job, delivery, release: inFlight.release, closed, theirs };
    }

    it('never ends the job: its outcome goes to its own entry only', async () => {
      const { job, delivery, release, closed, theirs } = await supersededInFlight({
        ...keyed,
        callbackUrl: 'https://merchant.example/cb',
      });

      release({ status: 200 });
      await delivery;

      const row = store.row(job.id);
      expect(row.status).toBe('running');
      expect(row.responseStatus).toBeNull();
      expect(row.attempts[1]).toEqual(theirs);
      expect(row.attempts[0]).toMatchObject({ status: 200, error_type: null, next_attempt_at: closed.next_attempt_at });
      expect(store.transitions.filter((t) => t.kind === 'finish' || t.kind === 'requeue')).toEqual([
        { kind: 'requeue', jobId: job.id, attempt: 1 },
      ]);
      expect(scheduled).toEqual([]);
      expect(queue.enqueued).toEqual([]);
    });

    it('does not requeue the job either when its answer was retryable', async () => {
      const { job, delivery, release, theirs } = await supersededInFlight(keyed);

      release({ status: 503 });
      await delivery;

      expect(store.row(job.id)).toMatchObject({
        status: 'running',
        attempts: [expect.objectContaining({ status: 503 }), theirs],
      });
      expect(queue.enqueued).toEqual([]);
    });

    it('leaves a job the later attempt ended as it ended', async () => {
      const { job, delivery, release, closed, theirs } = await supersededInFlight(keyed);
      const won = { ...theirs, duration_ms: 5, status: 201 };
      expect(await store.finish({ ...job, attempts: [closed, won] }, theirs.request_id, 'succeeded', null)).toBe(true);

      release({ status: 409 });
      await delivery;

      expect(store.row(job.id)).toMatchObject({
        status: 'succeeded',
        attempts: [expect.objectContaining({ status: 409 }), won],
      });
      expect(scheduled).toEqual([]);
    });
  });
});
