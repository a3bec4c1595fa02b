import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { queuedForwardEnv, startScriptedDownstream, startWorker, WorkerProcess } from '../support/forward-jobs';
import { expectProblem, http, HttpResult } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { testRedisUrl } from '../support/test-services';

const REDIS = new URL(testRedisUrl());

/**
 * Workers that die or are stopped mid-job, and a Redis that goes away under the API. The API reaches
 * Redis through a TCP proxy that the last test cuts; the workers connect directly.
 */
describe('Queued forwards survive their workers and their queue', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let token: string;
  const workers: WorkerProcess[] = [];
  const env = queuedForwardEnv('test-survival');

  async function worker(extra: Record<string, string> = {}): Promise<WorkerProcess> {
    const started = await startWorker({ ...env, ...extra });
    workers.push(started);
    return started;
  }

  beforeAll(async () => {
    proxy = await TcpProxy.start(REDIS.hostname, Number(REDIS.port || 6379));
    downstream = await startScriptedDownstream();
    t = await startTestApp({ env: { ...env, REDIS_URL: `redis://${proxy.address}` } });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    expect(
      (
        await http(t.url, '/vault-forward/configs', {
          method: 'POST',
          token,
          body: { display_name: 'x', hosts: [`127.0.0.1:${downstream.port}`], methods: ['GET', 'POST'] },
        })
      ).status,
    ).toBe(201);
  }, 60_000);

  // Each test starts the workers it needs and none outlives it: a test never uses, or races with, a
  // worker another test started, so each passes alone and in any order.
  const stopWorkers = async () => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null && w.child.signalCode === null) await w.kill();
  };
  afterEach(stopWorkers, 30_000);

  afterAll(async () => {
    await stopWorkers();
    await t?.close();
    await downstream?.close();
    await proxy?.close();
    await dropQueueKeys(env.FORWARD_QUEUE_NAME);
  }, 30_000);

  const queue = (path: string, extra: Record<string, string> = {}) =>
    http(t.url, '/vault-forward', {
      method: 'POST',
      token,
      headers: {
        prefer: 'respond-async',
        'x-vault-forward-url': `${downstream.url}${path}`,
        'x-vault-forward-http-method': 'GET',
        ...extra,
      },
    });
  const job = (id: string) => http(t.url, `/vault-forward/jobs/${id}`, { token });
  const ended = (id: string, timeoutMs: number) =>
    waitFor(
      async () => {
        const r = await job(id);
        return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) && r;
      },
      { timeoutMs, what: `job ${id} to end` },
    );

  it('kill -9 of the worker mid-attempt: a new worker recovers the stalled job, and the attempts say what happened', async () => {
    // 2 s locks (and leases) instead of 10 s: the handover below is then seconds, not half a minute.
    const first = await worker({ QUEUE_LOCK_DURATION_MS: '2000' });
    downstream.script('/killed', [{ hold: true }, { status: 200, body: '{"second":true}' }]);
    const id = (await queue('/killed')).body.id as string;
    await waitFor(() => downstream.requestsTo('/killed').length === 1, { timeoutMs: 10_000 });
    expect((await job(id)).body).toMatchObject({ status: 'running', attempts: [{ number: 1, duration_ms: null }] });
    await first.kill();
    downstream.held.splice(0).forEach((res) => res.destroy());

    await worker({ QUEUE_LOCK_DURATION_MS: '2000' });
    // BullMQ hands the job on once the dead worker's lock expires (QUEUE_LOCK_DURATION_MS) and a stalled
    // check (every half of it) sees it; the new worker then waits until the row's lease has stayed lapsed a
    // whole lease period (docs/decisions/0120): a few lock periods, well within this deadline.
    const done = await ended(id, 60_000);
    expect(done.body.status).toBe('succeeded');
    expect(done.body.attempts).toHaveLength(2);
    expect(done.body.attempts[0]).toMatchObject({ number: 1, status: null, error_type: 'outcome-unknown' });
    expect(done.body.attempts[1]).toMatchObject({ number: 2, status: 200 });
    expect(downstream.requestsTo('/killed')).toHaveLength(2);
  }, 120_000);

  it('SIGTERM: the worker finishes the running job before it exits 0', async () => {
    // Leases renewed every second (half the lock), so the test sees renewals soon after the signal.
    const current = await worker({ QUEUE_LOCK_DURATION_MS: '2000' });
    downstream.script('/draining', [{ hold: true }]);
    const id = (await queue('/draining')).body.id as string;
    // A worker just started takes its first job later on a loaded machine than a warm one did.
    await waitFor(() => downstream.requestsTo('/draining').length === 1, { timeoutMs: 30_000 });
    const lease = async () => {
      const [{ ms }] = await t.db.query<Array<{ ms: number }>>(
        `SELECT extract(epoch FROM lease_expires_at)::float8 * 1000 AS ms FROM vault_forward_jobs WHERE id = $1`,
        [id],
      );
      return Number(ms);
    };
    current.child.kill('SIGTERM');
    // The worker waits for the held answer instead of exiting: it still renews the job's lease twice after
    // the signal (a worker that did not wait would have exited at once, and renewed nothing).
    const atSignal = await lease();
    let renewed = atSignal;
    await waitFor(async () => (renewed = await lease()) > atSignal, { what: 'a lease renewal after SIGTERM' });
    await waitFor(async () => (await lease()) > renewed, { what: 'a second renewal' });
    expect(current.child.exitCode).toBeNull();
    const held = downstream.held.shift()!;
    held.writeHead(200, { 'content-type': 'text/plain' }).end('finished while draining');
    expect(await current.exited).toBe(0);
    const done = await job(id);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      attempts: [{ number: 1, status: 200 }],
      response: { status: 200, body: 'finished while draining' },
    });
  }, 60_000);

  it('with Redis cut off from the API: a queued forward is 503 with Retry-After and keeps no job; a synchronous one succeeds', async () => {
    const before = Number((await t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs`))[0].n);
    await proxy.cut();
    try {
      let refused: HttpResult | undefined;
      await waitFor(
        async () => {
          refused = await queue('/during-outage');
          return refused.status === 503;
        },
        { timeoutMs: 10_000, what: 'the API to notice Redis is gone' },
      );
      expectProblem(refused!, 503, 'forward-queue-unavailable');
      expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
      const sync = await http(t.url, '/vault-forward', {
        method: 'POST',
        token,
        headers: {
          'x-vault-forward-url': `${downstream.url}/sync-during-outage`,
          'x-vault-forward-http-method': 'GET',
        },
      });
      expect(sync.status).toBe(200);
      expect(Number((await t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs`))[0].n)).toBe(before);
    } finally {
      await proxy.restore();
    }
    await waitFor(async () => (await queue('/after-outage')).status === 202, {
      timeoutMs: 15_000,
      what: 'queued forwarding back',
    });
  }, 60_000);
});
