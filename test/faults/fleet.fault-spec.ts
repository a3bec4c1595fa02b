import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { startScriptedDownstream } from '../support/forward-jobs';
import {
  Fleet,
  FleetKey,
  FleetProcess,
  FleetRedis,
  privateClusterFleetRedis,
  privateFleetRedis,
} from '../support/fleet';
import { expectProblem, http, HttpResult } from '../support/http';
import { waitFor } from '../support/wait';

/**
 * Issue 25, item 4 (docs/decisions/0110): two APIs and three workers, real compiled entry points on one
 * database and one Redis (test/support/fleet.ts), as N APIs behind a load balancer and M workers run.
 * One API and one worker are SIGKILLed under load; revocations and config changes made through one
 * API must reach the other API and the workers within a second. The same fleet runs on a private
 * redis-server and on a private Redis Cluster (3 masters, 3 replicas; decision 0107).
 */
interface Variant {
  redisName: string;
  redis: () => Promise<FleetRedis>;
  /** Queued forwards sent, and after how many of them an API and a worker are SIGKILLed. */
  load: number;
  killAfter: number;
}
const VARIANTS: Variant[] = [
  { redisName: 'one Redis', redis: privateFleetRedis, load: 360, killAfter: 120 },
  // Fewer forwards: the kill is the same, and this variant's start (six redis-servers) is already extra time.
  { redisName: 'a Redis Cluster', redis: privateClusterFleetRedis, load: 240, killAfter: 80 },
];
const IN_FLIGHT = 15;
/**
 * A revocation or a config change reaches every process by a message (the product's bound is 1 s,
 * api-keys.controller.ts); this test checks the message, not its speed: a change is looked for within half the
 * shortest cache life (configs, 10 s), so one that only arrived by a cache's expiry fails.
 */
const PROPAGATION_DEADLINE_MS = 5_000;
const ENDED = ['succeeded', 'failed', 'cancelled'];
/** How a client sees a process that died under it: the connection refused or cut, never an HTTP answer. */
const CONNECTION_ERRORS = ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'];

describe.each(VARIANTS)('A fleet: two APIs and three workers on one database and $redisName', (variant) => {
  const { load: LOAD, killAfter: KILL_AFTER } = variant;
  /** What the figures printed are prefixed with. */
  const tag = `fleet (${variant.redisName})`;
  let fleet: Fleet;
  let downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  let db: Client;
  let merchant: string;
  let key: FleetKey;
  /** A second key of the merchant account, for the revocation test to revoke. */
  let victim: FleetKey;
  let token: string;

  beforeAll(async () => {
    downstream = await startScriptedDownstream();
    fleet = await Fleet.prepare({
      redis: await variant.redis(),
      env: {
        FORWARD_INSECURE_HOSTS: '127.0.0.1',
        FORWARD_RETRY_BASE_MS: '20',
        // A killed worker's jobs are handed on once its lock lapses: 3 s instead of 10 keeps the suite short.
        QUEUE_LOCK_DURATION_MS: '3000',
        WORKER_CONCURRENCY: '8',
      },
    });
    db = new Client({ connectionString: fleet.db.url });
    await db.connect();
    // The CLI makes the merchant account and its keys while the processes start.
    const seed = async () => {
      merchant = await fleet.merchant(`fleet-${randomUUID().slice(0, 8)}`);
      [key, victim] = await Promise.all([fleet.apiKey(merchant), fleet.apiKey(merchant)]);
    };
    await Promise.all([fleet.startProcesses(), seed()]);
    token = await key.token();
    const config = await http(fleet.apis[0].url, '/vault-forward/configs', {
      method: 'POST',
      token,
      body: { display_name: 'Fleet', hosts: [`127.0.0.1:${downstream.port}`] },
    });
    expect(config.status).toBe(201);
  }, 150_000);

  afterAll(async () => {
    await db?.end();
    await fleet?.close();
    await downstream?.close();
  }, 60_000);

  // Each test starts with the whole fleet, whatever an earlier one killed: killed processes start again on
  // their own port and spool, as an orchestrator restarts them.
  beforeEach(() => fleet.heal(), 120_000);

  /** Any API that is alive, for reading results; the first one by default. */
  const survivor = () => fleet.apis.find((api) => api.alive)!;
  const job = (id: string) => http(survivor().url, `/vault-forward/jobs/${id}`, { token });

  it('SIGKILL of one API and one worker under load: every 202 ends succeeded, none lost; the dead API only fails to connect', async () => {
    const [victimApi, victimWorker] = [fleet.apis[1], fleet.workers[0]];
    const accepted = new Map<string, { path: string; api: FleetProcess }>();
    const failures: Array<{ api: string; error?: string; status?: number; body?: unknown }> = [];
    /** Paths of forwards refused with 503 forward-queue-unavailable (nothing kept: a client retries them). */
    const refused: string[] = [];
    let sent = 0;
    let killed: Promise<void> | undefined;
    const send = async () => {
      for (;;) {
        const n = sent++;
        if (n >= LOAD) return;
        if (n === KILL_AFTER) killed = Promise.all([victimApi.kill(), victimWorker.kill()]).then(() => undefined);
        const path = `/jobs/${randomUUID()}`;
        const answer = await fleet.request('/vault-forward', {
          method: 'POST',
          token,
          headers: {
            prefer: 'respond-async',
            'idempotency-key': randomUUID(),
            'x-vault-forward-url': `${downstream.url}${path}`,
            'x-vault-forward-http-method': 'POST',
            'content-type': 'application/json',
          },
          rawBody: JSON.stringify({ n }),
        });
        if (answer.result?.status === 202) accepted.set(answer.result.body.id as string, { path, api: answer.api });
        // The producer fails fast (1 s, decision 0053): on a machine this loaded an enqueue can be refused so.
        else if (answer.result?.status === 503 && answer.result.body?.code === 'forward-queue-unavailable')
          refused.push(path);
        else
          failures.push({
            api: answer.api.name,
            error: answer.error,
            status: answer.result?.status,
            body: answer.result?.body,
          });
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, send));
    await killed;
    process.stdout.write(
      `${tag} load: ${LOAD} sent, ${accepted.size} accepted, ` +
        `${refused.length} refused (503), ${failures.length} failed to connect\n`,
    );

    // Only the killed API failed anyone, and only by not answering: no 5xx; at most a 503 refusal, which keeps nothing.
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures)
      expect({ api: failure.api, error: CONNECTION_ERRORS.includes(failure.error!) && 'a connection error' }).toEqual({
        api: victimApi.name,
        error: 'a connection error',
      });
    // Both APIs accepted some before the kill; the survivor took the rest.
    const byApi = (api: FleetProcess) => [...accepted.values()].filter((a) => a.api === api).length;
    expect(byApi(victimApi)).toBeGreaterThan(0);
    expect(byApi(fleet.apis[0])).toBeGreaterThan(byApi(victimApi));
    // The orchestrator starts the killed API again on its own spool while the jobs finish (awaited at the end).
    const apiBack = victimApi.respawn();
    apiBack.catch(() => undefined);

    // Every accepted job ends (read from the rows, cheaply), then each is looked up through the surviving API.
    const ids = [...accepted.keys()];
    await waitFor(
      async () => {
        const { rows } = await db.query(
          `SELECT count(*)::int AS open FROM vault_forward_jobs WHERE id = ANY($1) AND status <> ALL($2)`,
          [ids, ENDED],
        );
        return rows[0].open === 0;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'every accepted job to end' },
    );
    const results: HttpResult[] = [];
    for (let i = 0; i < ids.length; i += 25) results.push(...(await Promise.all(ids.slice(i, i + 25).map(job))));
    const statuses = results.map((r) => r.body.status as string);
    expect(statuses.filter((s) => s !== 'succeeded')).toEqual([]);

    // The downstream saw every accepted job; a job seen twice is one whose worker died mid-attempt (the record
    // says outcome-unknown), and both deliveries carried the job's idempotency key, so the target applies it once.
    const deliveries = new Map<string, Array<string | undefined>>();
    for (const r of downstream.received) {
      const keys = deliveries.get(r.url) ?? [];
      keys.push(r.headers['idempotency-key'] as string | undefined);
      deliveries.set(r.url, keys);
    }
    let twice = 0;
    results.forEach((result, i) => {
      const { path } = accepted.get(ids[i])!;
      const seen = deliveries.get(path) ?? [];
      expect({ path, seen: seen.length > 0 }).toEqual({ path, seen: true });
      if (seen.length > 1) {
        twice++;
        expect(result.body.attempts.some((a: { error_type: string }) => a.error_type === 'outcome-unknown')).toBe(true);
        expect(new Set(seen).size).toBe(1);
      }
    });
    // Nothing reached the downstream that was not asked for: extra deliveries are only forwards the killed
    // API took in and committed without answering (their client saw the connection cut).
    const acceptedPaths = new Set([...accepted.values()].map((a) => a.path));
    const unanswered = [...deliveries.keys()].filter((path) => !acceptedPaths.has(path));
    expect(unanswered.length).toBeLessThanOrEqual(failures.length);
    expect(refused.filter((path) => deliveries.has(path))).toEqual([]);
    // Memory after the load, per process: the sizing of the resource requests in deploy/kubernetes (docs/scaling.md).
    const rss = (p: FleetProcess) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'))?.[1]);
    const loaded = [fleet.apis[0], ...fleet.workers.slice(1)];
    process.stdout.write(
      `${tag} RSS (MiB): ${loaded.map((p) => `${p.name} ${Math.round(rss(p) / 1024)}`).join(', ')}\n`,
    );
    process.stdout.write(
      `${tag} load: every one of ${ids.length} accepted jobs succeeded; ${twice} delivered twice after outcome-unknown, ` +
        `${unanswered.length} sent though their client saw the connection cut\n`,
    );
    // The fleet whole again, as an orchestrator makes it (beforeEach would otherwise, at the next test's cost).
    await Promise.all([apiBack, victimWorker.respawn()]);
  }, 120_000);

  it('revoking an API key and changing a config through API 1 reach API 2 and the workers by message, not cache expiry', async () => {
    const [one, two] = fleet.apis;
    const takesEffect = (what: string, check: () => Promise<boolean>) =>
      waitFor(check, { timeoutMs: PROPAGATION_DEADLINE_MS, intervalMs: 20, what });

    // An API key: warm in API 2's cache, revoked through API 1.
    const victimToken = await victim.token();
    expect((await http(two.url, '/vault-forward/configs', { token: victimToken })).status).toBe(200);
    const revoked = await http(one.url, `/api-keys/${victim.id}`, { method: 'DELETE', token });
    expect(revoked.status).toBe(204);
    await takesEffect(
      'key revoked on API 2',
      async () => (await http(two.url, '/vault-forward/configs', { token: victimToken })).status === 401,
    );

    // A config: created through API 1, usable through API 2; then stripped of its host through API 1 while a job
    // waits between attempts on a worker.
    const own = await startScriptedDownstream();
    try {
      const forwardVia2 = () =>
        http(two.url, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            'x-vault-forward-url': `${own.url}/sync`,
            'x-vault-forward-http-method': 'POST',
            'content-type': 'application/json',
          },
          rawBody: '{}',
        });
      expectProblem(await forwardVia2(), 403, 'endpoint-not-enabled');
      const created = await http(one.url, '/vault-forward/configs', {
        method: 'POST',
        token,
        body: { display_name: 'Changes', hosts: [`127.0.0.1:${own.port}`] },
      });
      expect(created.status).toBe(201);
      await takesEffect('config created, on API 2', async () => (await forwardVia2()).status === 200);

      own.script('/later', [{ hold: true }, { status: 200 }]);
      // The producer fails fast (1 s): on a loaded machine an enqueue may be refused with 503
      // forward-queue-unavailable and Retry-After, which tells a client to retry; so does this one.
      let queued!: HttpResult;
      await waitFor(
        async () => {
          queued = await http(two.url, '/vault-forward', {
            method: 'POST',
            token,
            headers: {
              prefer: 'respond-async',
              'x-vault-forward-url': `${own.url}/later`,
              // PUT: idempotent, so a 503 is retried (a POST without an idempotency key is not).
              'x-vault-forward-http-method': 'PUT',
            },
          });
          if (queued.status === 503) expectProblem(queued, 503, 'forward-queue-unavailable');
          return queued.status !== 503;
        },
        { timeoutMs: 15_000, intervalMs: 100, what: 'API 2 to take queued forwards' },
      );
      expect(queued.status).toBe(202);
      await waitFor(() => own.held.length === 1, { timeoutMs: 15_000, what: 'the first attempt at the downstream' });

      const changed = await http(one.url, `/vault-forward/configs/${created.body.id}`, {
        method: 'PUT',
        token,
        body: { hosts: ['elsewhere.example'] },
      });
      expect(changed.status).toBe(200);
      // The first attempt is answered 503 with Retry-After: 1, so the second is sent by a worker a second after
      // the change (Retry-After counts whole seconds, which makes this the tightest bound a worker can be held to).
      own.held.shift()!.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' }).end('{}');
      await takesEffect('config changed, on API 2', async () => (await forwardVia2()).status === 403);
      const ended = await waitFor(
        async () => {
          const r = await http(two.url, `/vault-forward/jobs/${queued.body.id}`, { token });
          return ENDED.includes(r.body.status) && r;
        },
        { timeoutMs: 20_000, what: 'the queued job to end' },
      );
      const second = ended.body.attempts[1];
      expect(ended.body.status).toBe('failed');
      expect(ended.body.attempts).toHaveLength(2);
      expect(second.error_type).toBe('endpoint-not-enabled');
      // Nothing was sent for the second attempt: the worker judged it with the new config.
      expect(own.requestsTo('/later')).toHaveLength(1);
    } finally {
      await own.close();
    }
  }, 60_000);
});
