import { randomUUID } from 'node:crypto';
import {
  expectEachSucceededOnce,
  FAILOVER_QUEUE_ENV,
  QueuedLoad,
  QueuedStack,
  startQueuedStack,
  startWorker,
} from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const ENDED = ['succeeded', 'failed', 'cancelled'];

/**
 * Redis restarting mid-load without persistence (a private redis-server, SIGKILLed and started again
 * empty): every BullMQ job waiting in it is lost, with the housekeeping scheduler. The job rows in
 * PostgreSQL are the truth: the worker puts its scheduler back when Redis returns and, finding its
 * swept-marker key gone, enqueues every queued job again, so every 202 ends in a final state, each sent once.
 */
describe('Queued forwards survive a Redis restart that loses its data', () => {
  let redis: PrivateRedis;
  let stack: QueuedStack;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    // Slow answers and few slots: a backlog waits in Redis when it dies.
    stack = await startQueuedStack(
      {
        ...FAILOVER_QUEUE_ENV,
        REDIS_URL: redis.url,
        FORWARD_QUEUE_NAME: `test-redis-restart-${randomUUID()}`,
        WORKER_CONCURRENCY: '4',
      },
      { loadDelayMs: 40, methods: ['POST', 'PUT'] },
    );
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    await redis?.kill();
  }, 30_000);

  it('kills Redis under load and starts it again empty: every accepted job ends succeeded, each sent exactly once', async () => {
    const { t, merchant } = stack;
    const before = await stack.load(160);
    expect(before.refused).toBe(0);
    // What the restart takes away: jobs accepted and still waiting in Redis.
    const waiting = Number(
      (
        await t.db.query(
          `SELECT count(*) AS n FROM vault_forward_jobs WHERE merchant_account_id = $1 AND status = 'queued'`,
          [merchant],
        )
      )[0].n,
    );
    expect(waiting).toBeGreaterThan(20);

    await redis.kill();
    const during = await stack.load(20);
    await redis.restart();
    // Load goes on while the API and the worker reconnect: refused with 503 until the API's producer is back
    // (ioredis retries with a growing delay, so that can take a second or two), then accepted again.
    const after: QueuedLoad[] = [];
    const acceptedAfter = () => after.reduce((n, batch) => n + batch.accepted.length, 0);
    await waitFor(
      async () => {
        after.push(await stack.load(20));
        return acceptedAfter() >= 120;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: '120 queued forwards accepted after the restart' },
    );

    await expectEachSucceededOnce(stack, [before, during, ...after], { timeoutMs: 90_000 });
    // The lost ones came back through the recovery sweep, not by chance.
    expect(stack.worker.output()).toMatch(
      /the job queue may have lost its jobs: every queued forward was enqueued again/,
    );
  }, 180_000);

  /** A queued PUT to `path` (scripted to hold it first); resolves with the job's id once the downstream holds the request. */
  async function running(path: string): Promise<string> {
    const accepted = await http(stack.t.url, '/vault-forward', {
      method: 'POST',
      token: stack.token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${stack.downstream.url}${path}`,
        'x-vault-forward-http-method': 'PUT',
      },
      body: { path },
    });
    expect(accepted.status).toBe(202);
    await waitFor(() => stack.downstream.requestsTo(path).length === 1, { what: `the attempt to reach ${path}` });
    return accepted.body.id as string;
  }

  const jobRow = async (id: string) =>
    (
      await stack.t.db.query<
        Array<{ status: string; attempts: Array<{ status: number | null; error_type: string | null }> }>
      >(`SELECT status, attempts FROM vault_forward_jobs WHERE id = $1`, [id])
    )[0];

  it('a job running when its worker is killed and Redis loses its data is taken again once its lease lapses', async () => {
    stack.downstream.script('/held', [{ hold: true }, { status: 200, body: '{"second":true}' }]);
    const id = await running('/held');
    // Both at once: BullMQ's copy of the running job (and its lock) gone with Redis, its worker gone too.
    // Only the row's lease says the attempt is not running any more.
    await stack.worker.kill();
    await redis.kill();
    await redis.restart();
    expect((await jobRow(id)).status).toBe('running');
    stack.worker = await startWorker(stack.env);
    const ended = await waitFor(async () => ENDED.includes((await jobRow(id)).status) && jobRow(id), {
      timeoutMs: 30_000,
      what: 'the job to end',
    });
    expect(ended.status).toBe('succeeded');
    expect(ended.attempts.map((a) => a.error_type ?? a.status)).toEqual(['outcome-unknown', 200]);
    expect(stack.downstream.requestsTo('/held')).toHaveLength(2);
    expect(stack.worker.output()).toMatch(/running with a lapsed lease, were enqueued again/);
  }, 90_000);

  it('a job still running while Redis loses its data keeps its lease, renewed by its worker: it is not sent twice', async () => {
    stack.downstream.script('/long', [{ hold: true }]);
    const id = await running('/long');
    const lease = async () =>
      Number(
        (
          await stack.t.db.query<Array<{ ms: number }>>(
            `SELECT extract(epoch FROM lease_expires_at) * 1000 AS ms FROM vault_forward_jobs WHERE id = $1`,
            [id],
          )
        )[0].ms,
      );
    const first = await lease();
    await redis.kill();
    await redis.restart();
    // Well past the first lease (2 s), with the sweep running every second: renewed, so never enqueued again.
    await waitFor(async () => (await lease()) > first + 4_000, { timeoutMs: 15_000, what: 'the lease to be renewed' });
    // (The previous test's held request is in the list too, its connection long closed.)
    stack.downstream.held
      .find((held) => held.req.url === '/long')!
      .writeHead(200)
      .end('late but once');
    const ended = await waitFor(async () => ENDED.includes((await jobRow(id)).status) && jobRow(id), {
      timeoutMs: 15_000,
      what: 'the job to end',
    });
    expect(ended).toMatchObject({ status: 'succeeded', attempts: [{ status: 200 }] });
    expect(stack.downstream.requestsTo('/long')).toHaveLength(1);
  }, 60_000);
});
