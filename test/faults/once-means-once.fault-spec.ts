import { randomUUID } from 'node:crypto';
import { QueuedStack, startQueuedStack, startWorker, WorkerProcess } from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivatePostgres } from '../support/private-postgres';
import { PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/** Jobs in flight when the lock's store goes away. */
const JOBS = 20;
/** How long the downstream takes to answer: the outage starts and ends while every job is in flight. */
const DOWNSTREAM_MS = 40_000;
/** The outage: twice the lock (QUEUE_LOCK_DURATION_MS, 10 s by default), so every BullMQ lock lapses. */
const OUTAGE_MS = 20_000;
/** Each forward's own timeout (x-vault-forward-timeout, seconds): well past the downstream's answer. */
const FORWARD_TIMEOUT_S = 120;
const ENDED = ['succeeded', 'failed', 'cancelled'];

/**
 * "Once means once" (docs/decisions/0120): two worker processes run 20 keyed forwards to a downstream
 * that answers after 40 s, and the store of BullMQ's locks goes away for 20 s meanwhile (Redis frozen,
 * Redis killed and restarted from its append-only file, PostgreSQL stopped and started again on the
 * PostgreSQL engine, its owner slower back than the other worker). BullMQ's stalled check hands the jobs
 * on; the job rows' leases, renewed by their live owner, keep the other worker from sending them again.
 * Every job reaches the downstream exactly once, ends
 * succeeded with one attempt (what the downstream saw), and gets one callback telling so.
 */
describe('Once means once: a live owner is never overtaken when the lock store goes away', () => {
  let stack: QueuedStack | undefined;
  let second: WorkerProcess | undefined;
  let redis: PrivateRedis | undefined;
  let postgres: PrivatePostgres | undefined;

  afterEach(async () => {
    redis?.thaw();
    // Back up, so the stack's database can be dropped; the cluster goes with it after.
    await postgres?.restart().catch(() => undefined);
    if (second && second.child.exitCode === null && second.child.signalCode === null) await second.kill();
    await stack?.close();
    await redis?.kill();
    await postgres?.stop();
    stack = second = redis = postgres = undefined;
  }, 60_000);

  /**
   * The stack with a second worker; 20 keyed forwards with callbacks, each to a path of its own, all held by the
   * downstream. With `secondAfterSends`, the second worker starts once every job has reached the downstream, so
   * the first one owns them all.
   */
  async function inFlight(env: Record<string, string>, postgresAdminUrl?: string, secondAfterSends = false) {
    stack = await startQueuedStack(
      {
        FORWARD_QUEUE_NAME: `test-once-${randomUUID()}`,
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_JOB_OVERDUE: '5s',
        FORWARD_JOB_SWEEP_INTERVAL: '2s',
        WORKER_CONCURRENCY: '16',
        ...env,
      },
      { loadDelayMs: 0, postgresAdminUrl },
    );
    if (!secondAfterSends) second = await startWorker(stack.env);
    const s = stack;
    expect((await http(s.t.url, '/vault-forward/webhook-secrets', { method: 'POST', token: s.token })).status).toBe(
      201,
    );
    const jobs = await Promise.all(
      Array.from({ length: JOBS }, async (_, n) => {
        const path = `/once/${n}`;
        s.downstream.script(path, [{ status: 200, body: `{"n":${n}}`, delayMs: DOWNSTREAM_MS }]);
        const accepted = await http(s.t.url, '/vault-forward', {
          method: 'POST',
          token: s.token,
          headers: {
            prefer: 'respond-async',
            'idempotency-key': `once-${randomUUID()}`,
            'x-vault-forward-url': `${s.downstream.url}${path}`,
            'x-vault-forward-http-method': 'POST',
            // Above the downstream's delay (the default, 30 s, would time every job out and retry it).
            'x-vault-forward-timeout': String(FORWARD_TIMEOUT_S),
            'x-vault-forward-payment-methods': s.card,
            'x-vault-forward-callback-url': `${s.downstream.url}/callback/${n}`,
          },
          rawBody: `{"n":${n},"number":"{{ CARD_NUMBER_1 }}"}`,
        });
        expect(accepted.status).toBe(202);
        return { id: accepted.body.id as string, path, callback: `/callback/${n}` };
      }),
    );
    await waitFor(() => jobs.every((job) => s.downstream.requestsTo(job.path).length === 1), {
      timeoutMs: 30_000,
      what: 'every job to reach the downstream',
    });
    if (secondAfterSends) second = await startWorker(stack.env);
    return jobs;
  }

  /** The outage's length: the fault itself, not a wait for a result. */
  const outage = () => new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));

  /** The check, with both workers' logs printed when it fails (what each saw of the fault). */
  async function expectEachOnce(jobs: Array<{ id: string; path: string; callback: string }>) {
    try {
      await checkEachOnce(jobs);
    } catch (error) {
      for (const [name, worker] of [
        ['first', stack?.worker],
        ['second', second],
      ] as const)
        console.error(`--- the ${name} worker's log ---\n${worker?.output() ?? ''}`);
      throw error;
    }
  }

  async function checkEachOnce(jobs: Array<{ id: string; path: string; callback: string }>) {
    const s = stack!;
    const rows = await waitFor(
      async () => {
        const found = await s.t.db.query<
          Array<{ id: string; status: string; attempts: Array<{ status: number | null; error_type: string | null }> }>
        >(`SELECT id, status, attempts FROM vault_forward_jobs WHERE id = ANY($1::uuid[])`, [jobs.map((j) => j.id)]);
        return found.length === JOBS && found.every((row) => ENDED.includes(row.status)) && found;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'every job to end' },
    );
    // A missing callback shows in the per-job picture below, with the sends and the history.
    await waitFor(() => jobs.every((job) => s.downstream.requestsTo(job.callback).length >= 1), {
      timeoutMs: 30_000,
      what: 'every job-end callback',
    }).catch(() => undefined);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const seen = jobs.map((job) => {
      const row = byId.get(job.id)!;
      const callbacks = s.downstream.requestsTo(job.callback);
      return {
        sends: s.downstream.requestsTo(job.path).length,
        status: row.status,
        attempts: row.attempts.map((a) => a.error_type ?? a.status),
        callbacks: callbacks.map((c) => (JSON.parse(c.body.toString('utf8')) as { status: string }).status),
      };
    });
    const expected = { sends: 1, status: 'succeeded', attempts: [200], callbacks: ['succeeded'] };
    expect(seen.filter((one) => JSON.stringify(one) !== JSON.stringify(expected))).toEqual([]);
  }

  it('Redis engine, Redis frozen (SIGSTOP) for 20 s: each job sent once, ended once, called back once', async () => {
    redis = await PrivateRedis.start();
    const jobs = await inFlight({ QUEUE_BACKEND: 'redis', REDIS_URL: redis.url });
    redis.freeze();
    await outage();
    redis.thaw();
    await expectEachOnce(jobs);
  }, 240_000);

  it('Redis engine, Redis killed and restarted from its append-only file after 20 s: each job sent once', async () => {
    redis = await PrivateRedis.start({ aof: true });
    const jobs = await inFlight({ QUEUE_BACKEND: 'redis', REDIS_URL: redis.url });
    await redis.kill();
    await outage();
    await redis.restart();
    await expectEachOnce(jobs);
  }, 240_000);

  it('PostgreSQL engine, PostgreSQL stopped 20 s, its owner slower back: each job sent once', async () => {
    // A cluster of the test's own: a real stop ends every session and refuses connections, as the
    // machine's PostgreSQL going down does; the shared server stays up for the other test files.
    // BullMQ's PostgreSQL engine marks every active job on one stalled pass and takes back, on the next,
    // those whose lock has lapsed; after an outage the owner's lock renewal and the other worker's pass
    // race. The owner (which holds every job here) is held (SIGSTOP) from the stop until the other
    // worker's pass has taken its jobs back, so that race always goes the way that sent jobs twice.
    postgres = await PrivatePostgres.start();
    // One worker runs all 20 at once before the other starts.
    const jobs = await inFlight(
      { QUEUE_BACKEND: 'postgres', REDIS_URL: '', WORKER_CONCURRENCY: String(JOBS) },
      postgres.adminUrl,
      true,
    );
    const owner = stack!.worker.child;
    await postgres.stop();
    owner.kill('SIGSTOP');
    try {
      await outage();
      await postgres.restart();
      await waitFor(
        async () => {
          const [taken] = await stack!.t.db
            .query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM bullmq.job WHERE stalled_count > 0`)
            .catch(() => [{ n: 0 }]);
          return taken.n >= JOBS;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: "the other worker's stalled pass to take the owner's jobs back" },
      );
    } finally {
      owner.kill('SIGCONT');
    }
    await expectEachOnce(jobs);
  }, 240_000);
});
