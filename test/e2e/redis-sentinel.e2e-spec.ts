import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { startScriptedDownstream, startWorker, WorkerProcess, queuedLoad } from '../support/forward-jobs';
import { http } from '../support/http';
import { PrivateSentinel, SENTINEL_NAME } from '../support/private-sentinel';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

const ENDED = ['succeeded', 'failed', 'cancelled'];

/**
 * Redis behind Sentinel (issue 25, decision 0094): 1 master, 1 replica, 3 sentinels of the test's own. The
 * master is SIGKILLed under a load of queued forwards; the sentinels promote the replica and every client of
 * the API and the worker (shared, publisher, subscriber, the queue's producer and worker connections) finds
 * it through them, with no restart. Jobs the master had not copied to the replica are put back by the sweep
 * from their rows in PostgreSQL.
 */
describe('Redis Sentinel: a failover under load', () => {
  let sentinel: PrivateSentinel;
  let t: TestApp;
  let worker: WorkerProcess;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let token: string;
  let merchant: string;

  beforeAll(async () => {
    sentinel = await PrivateSentinel.start();
    downstream = await startScriptedDownstream();
    downstream.script('/load', [{ status: 200, body: '{"ok":true}', delayMs: 40 }]);
    const env = {
      QUEUE_BACKEND: 'redis',
      // Its host is a closed port: only the sentinels can lead a client to the master.
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_SENTINELS: sentinel.sentinelList,
      REDIS_SENTINEL_NAME: SENTINEL_NAME,
      FORWARD_QUEUE_NAME: `test-sentinel-${randomUUID()}`,
      FORWARD_RETRY_BASE_MS: '20',
      FORWARD_INSECURE_HOSTS: '127.0.0.1',
      FORWARD_JOB_OVERDUE: '2s',
      FORWARD_JOB_SWEEP_INTERVAL: '1s',
      WORKER_CONCURRENCY: '4',
      QUEUE_LOCK_DURATION_MS: '2000',
    };
    t = await startTestApp({ env });
    worker = await startWorker(env);
    merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token();
    expect(
      (
        await http(t.url, '/vault-forward/configs', {
          method: 'POST',
          token,
          body: { display_name: 'x', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
        })
      ).status,
    ).toBe(201);
  }, 90_000);

  afterAll(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) await worker.kill();
    await t?.close();
    await downstream?.close();
    await sentinel?.stop();
  }, 30_000);

  const load = (count: number) => queuedLoad(t.url, token, `${downstream.url}/load`, count);

  it('kills the master under load: the replica takes over, every 202 ends succeeded, each sent exactly once', async () => {
    const before = await load(160);
    expect(before.refused).toBe(0);
    expect(downstream.requestsTo('/load').length).toBeLessThan(before.accepted.length);

    await sentinel.killMaster();
    // Load goes on through the failover (refused with 503 until the sentinels name the new master).
    const during = await load(40);
    await waitFor(async () => (await sentinel.masterPort()) === sentinel.replicaPort, {
      timeoutMs: 30_000,
      what: 'the sentinels to promote the replica',
    });
    const after: string[] = [];
    await waitFor(
      async () => {
        const answered = await load(20);
        after.push(...answered.accepted);
        return answered.refused === 0;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the API to enqueue on the new master' },
    );
    const accepted = [...before.accepted, ...during.accepted, ...after];

    await waitFor(
      async () => {
        const [row] = await t.db.query(
          `SELECT count(*) AS n FROM vault_forward_jobs WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[])`,
          [accepted, ENDED],
        );
        return Number(row.n) === accepted.length;
      },
      { timeoutMs: 90_000, what: `all ${accepted.length} accepted jobs to end` },
    );
    const rows = await t.db.query<Array<{ status: string; attempts: number }>>(
      `SELECT status, jsonb_array_length(attempts) AS attempts FROM vault_forward_jobs WHERE id = ANY($1::uuid[])`,
      [accepted],
    );
    expect(rows).toHaveLength(accepted.length);
    expect(rows.filter((r) => r.status !== 'succeeded' || Number(r.attempts) !== 1)).toEqual([]);
    expect(
      Number(
        (await t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs WHERE merchant_account_id = $1`, [merchant]))[0]
          .n,
      ),
    ).toBe(accepted.length);
    // Each job once: its body carries nothing unique, so the count is the check (a second send would exceed it).
    expect(downstream.requestsTo('/load')).toHaveLength(accepted.length);
    // Both processes went on without a restart.
    expect(worker.child.exitCode).toBeNull();
    expect(await http(t.url, '/health/ready')).toMatchObject({ status: 200 });
  }, 240_000);
});
