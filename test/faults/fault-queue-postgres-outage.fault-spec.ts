import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createCard } from '../factories/cards';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { startScriptedDownstream, startWorker, WorkerProcess } from '../support/forward-jobs';
import { http, HttpResult } from '../support/http';
import { dropQueueKeys } from '../support/redis-keys';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';
import { allowHeavyDisclosure } from '../factories/disclosure-budgets';

const PG = new URL(process.env.TEST_DATABASE_URL!);
const ENDED = ['succeeded', 'failed', 'cancelled'];
/** Long enough for BullMQ's own five tries of a throwing handler (1 + 2 + 4 + 8 s at the default base) to run out. */
const OUTAGE_MS = 20_000;
/**
 * No answer may take longer than this, outage or not (the API's query and enqueue bounds are 5 s): a request
 * still unanswered then is aborted and counted as no answer (status 0), which fails the test.
 */
const ANSWER_BOUND_MS = 15_000;

/**
 * PostgreSQL unreachable for the API and the worker (both behind one TCP proxy in front of the shared
 * server) while queued forwards are in flight. Whatever was accepted (202) must end, each request
 * reaching the downstream exactly once; what was refused is a 503 problem with Retry-After, and an
 * Idempotency-Key the refusal left claimed is free again once the database is back.
 */
interface Setup {
  proxy: TcpProxy;
  t: TestApp;
  worker: WorkerProcess;
  downstream: Awaited<ReturnType<typeof startScriptedDownstream>>;
  token: string;
  merchant: string;
  card: string;
  queueName: string;
  /** How long the downstream takes per request: a backlog must still be queued or running when the outage starts. */
  delayMs: number;
  /** Submission loops still going (stopped by tearDown when a test failed midway). */
  loads: Array<{ stop(): Promise<unknown> }>;
}

async function setUp(engine: 'redis' | 'postgres', delayMs = 20): Promise<Setup> {
  const proxy = await TcpProxy.start(PG.hostname, Number(PG.port || 5432));
  const viaProxy = new URL(process.env.TEST_DATABASE_URL!);
  viaProxy.host = proxy.address;
  const downstream = await startScriptedDownstream();
  const queueName = `test-pg-outage-${randomUUID()}`;
  const env: Record<string, string> = {
    QUEUE_BACKEND: engine,
    // The PostgreSQL engine runs without Redis at all.
    ...(engine === 'postgres' ? { REDIS_URL: '' } : {}),
    DATABASE_URL: viaProxy.toString(),
    FORWARD_QUEUE_NAME: queueName,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
    FORWARD_JOB_OVERDUE: '5s',
    FORWARD_JOB_SWEEP_INTERVAL: '2s',
    QUEUE_LOCK_DURATION_MS: '4000',
    WORKER_CONCURRENCY: '8',
  };
  const t = await startTestApp({ env });
  const worker = await startWorker(env);
  const merchant = (await createMerchantAccount(t)).id;
  await allowHeavyDisclosure(t.db, merchant);
  const token = await (await createApiKey(t, merchant)).token();
  const config = await http(t.url, '/vault-forward/configs', {
    method: 'POST',
    token,
    body: { display_name: 'Outage target', hosts: [`127.0.0.1:${downstream.port}`], methods: ['POST'] },
  });
  expect(config.status).toBe(201);
  const card = (await createCard(t, merchant)).id;
  return { proxy, t, worker, downstream, token, merchant, card, queueName, delayMs, loads: [] };
}

async function tearDown(s: Setup | undefined, engine: 'redis' | 'postgres'): Promise<void> {
  if (!s) return;
  await Promise.all(s.loads.map((load) => load.stop().catch(() => undefined)));
  await s.proxy.restore();
  if (s.worker.child.exitCode === null && s.worker.child.signalCode === null) await s.worker.kill();
  await s.t.close();
  await s.downstream.close();
  await s.proxy.close();
  if (engine === 'redis') await dropQueueKeys(s.queueName);
}

interface Submitted {
  path: string;
  key: string | null;
  answer: HttpResult;
  /** The order the answer came in, among all answers of the file (an outage returns the count at its end). */
  at: number;
}

let answersSoFar = 0;

/** One queued forward to a path of its own (the downstream counts requests per path, so per job). */
async function submit(s: Setup, options: { key?: string; path?: string } = {}): Promise<Submitted> {
  const path = options.path ?? `/job/${randomUUID()}`;
  // Each request waits a little at the downstream, so a backlog is in flight when the database goes.
  s.downstream.script(path, [{ status: 200, body: '{"ok":true}', delayMs: s.delayMs }]);
  const answer = await http(s.t.url, '/vault-forward', {
    method: 'POST',
    token: s.token,
    headers: {
      prefer: 'respond-async',
      'x-vault-forward-url': `${s.downstream.url}${path}`,
      'x-vault-forward-http-method': 'POST',
      'x-vault-forward-payment-methods': s.card,
      ...(options.key ? { 'idempotency-key': options.key } : {}),
    },
    body: { number: '{{ CARD_NUMBER_1 }}', path },
    signal: AbortSignal.timeout(ANSWER_BOUND_MS),
  }).catch((error: unknown): HttpResult => ({
    status: 0,
    headers: new Headers(),
    body: String(error),
    text: String(error),
  }));
  return { path, key: options.key ?? null, answer, at: ++answersSoFar };
}

/** 202 with a job, or (the database or queue unreachable) a 503 problem with Retry-After; never a hang or a 500. */
function expectAcceptedOrRefused(all: Submitted[]): void {
  const unexpected = all
    .filter(
      ({ answer: a }) =>
        !(
          a.status === 202 ||
          (a.status === 503 &&
            (a.headers.get('content-type') ?? '').startsWith('application/problem+json') &&
            /^\d+$/.test(a.headers.get('retry-after') ?? ''))
        ),
    )
    .map(({ answer: a }) => ({ status: a.status, body: a.body }));
  expect(unexpected).toEqual([]);
}

/** Keeps `parallel` submissions going until stop() (before, during and after an outage). */
function keepSubmitting(s: Setup, parallel: number, key: () => string | undefined = () => undefined) {
  const all: Submitted[] = [];
  let stopped = false;
  const loops = Array.from({ length: parallel }, async () => {
    while (!stopped) all.push(await submit(s, { key: key() }));
  });
  const load = {
    all,
    /** Waits until `count` submissions answered after the `since`-th answer were accepted (202). */
    accepted: (count: number, since: number, what: string, timeoutMs = 30_000) =>
      waitFor(() => all.filter((a) => a.answer.status === 202 && a.at > since).length >= count, {
        timeoutMs,
        intervalMs: 250,
        what,
      }),
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return all;
    },
  };
  s.loads.push(load);
  return load;
}

/**
 * Holds the database away (`cut`: a killed server; `blackhole`: a paused one) for `ms`; returns the count of
 * answers so far once it is back, so that later answers can be told apart.
 */
async function outage(s: Setup, kind: 'cut' | 'blackhole', ms: number): Promise<number> {
  await (kind === 'cut' ? s.proxy.cut() : s.proxy.blackhole());
  const downAt = Date.now();
  await waitFor(() => Date.now() - downAt >= ms, { timeoutMs: ms + 5_000, intervalMs: 250 });
  await s.proxy.restore();
  return answersSoFar;
}

/** Waits until every accepted job has ended, then checks each succeeded and reached the downstream exactly once. */
async function expectEachAcceptedJobSentOnce(s: Setup, accepted: Submitted[], timeoutMs: number): Promise<void> {
  const ids = accepted.map((a) => a.answer.body.id as string);
  await waitFor(
    async () => {
      const [row] = await s.t.db.query(
        `SELECT count(*) AS n FROM vault_forward_jobs WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[])`,
        [ids, ENDED],
      );
      return Number(row.n) === ids.length;
    },
    { timeoutMs, intervalMs: 500, what: `all ${ids.length} accepted jobs to end` },
  );
  const rows = await s.t.db.query<Array<{ id: string; status: string; attempts: unknown[] }>>(
    `SELECT id, status, attempts FROM vault_forward_jobs WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  expect(rows.filter((row) => row.status !== 'succeeded')).toEqual([]);
  const sent = new Map<string, number>();
  for (const request of s.downstream.received) sent.set(request.url, (sent.get(request.url) ?? 0) + 1);
  expect(
    accepted.filter((a) => sent.get(a.path) !== 1).map((a) => ({ path: a.path, sent: sent.get(a.path) ?? 0 })),
  ).toEqual([]);
  // No path at all (accepted or not) was sent twice.
  expect([...sent.entries()].filter(([, n]) => n > 1)).toEqual([]);
}

describe('Queued forwards on Redis while PostgreSQL is unreachable for 20 s: delayed, never stranded', () => {
  let s: Setup | undefined;

  beforeAll(async () => {
    // FORWARD_RETRY_BASE_MS at its default (1 s): BullMQ's tries of a handler that throws run out in ~15 s.
    s = await setUp('redis');
  }, 90_000);

  afterAll(() => tearDown(s, 'redis'), 60_000);

  it('every job accepted before, during and after the outage ends succeeded, each sent exactly once', async () => {
    const setup = s!;
    const load = keepSubmitting(setup, 12);
    // A backlog queued and partly running when the database goes.
    await load.accepted(300, 0, '300 accepted jobs', 60_000);
    const upAt = await outage(setup, 'cut', OUTAGE_MS);
    await load.accepted(50, upAt, 'submissions accepted again');
    const all = await load.stop();
    expectAcceptedOrRefused(all);
    const accepted = all.filter((a) => a.answer.status === 202);
    expect(all.filter((a) => a.answer.status === 503).length).toBeGreaterThan(0);
    await expectEachAcceptedJobSentOnce(setup, accepted, 60_000);
  }, 180_000);
});

describe('Queued forwards on the PostgreSQL engine (no Redis) while PostgreSQL is unreachable for 20 s', () => {
  let s: Setup | undefined;

  beforeAll(async () => {
    s = await setUp('postgres', 100);
  }, 90_000);

  afterAll(() => tearDown(s, 'postgres'), 60_000);

  it('the producer comes back by itself (queue up, 202s again) and every accepted job ends succeeded, each sent once', async () => {
    const setup = s!;
    const load = keepSubmitting(setup, 8);
    await load.accepted(150, 0, '150 accepted jobs', 60_000);
    const upAt = await outage(setup, 'cut', OUTAGE_MS);
    await waitFor(async () => (await http(setup.t.url, '/health/ready')).body?.checks?.queue === 'up', {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'readiness to report the queue up again',
    });
    await load.accepted(30, upAt, 'queued forwards accepted again');
    const all = await load.stop();
    expectAcceptedOrRefused(all);
    expect(all.filter((a) => a.answer.status === 503).length).toBeGreaterThan(0);
    await expectEachAcceptedJobSentOnce(
      setup,
      all.filter((a) => a.answer.status === 202),
      90_000,
    );
  }, 240_000);
});

describe('Idempotency-Key of a queued forward refused while PostgreSQL hangs (paused): free again once it is back', () => {
  let s: Setup | undefined;

  beforeAll(async () => {
    s = await setUp('redis');
  }, 90_000);

  afterAll(() => tearDown(s, 'redis'), 60_000);

  it('every refused key gets its job on a retry (no 409 left behind); each job sent exactly once', async () => {
    const setup = s!;
    const load = keepSubmitting(setup, 16, () => randomUUID());
    await load.accepted(100, 0, '100 accepted jobs', 60_000);
    // Paused, not stopped: connections are accepted and never answered.
    const upAt = await outage(setup, 'blackhole', 8_000);
    await load.accepted(30, upAt, 'queued forwards accepted again');
    const all = await load.stop();
    expectAcceptedOrRefused(all);
    const refused = all.filter((a) => a.answer.status === 503);
    expect(refused.length).toBeGreaterThan(0);

    // The client does what the 503 says: retries the same request with the same key. Each gets its job
    // (202, or 200 with the job if the refused request's job was kept after all), never 409 for long.
    const retries = await Promise.allSettled(
      refused.map((first) =>
        waitFor(
          async () => {
            const again = await submit(setup, { key: first.key!, path: first.path });
            if (![200, 202, 409, 503].includes(again.answer.status))
              throw new Error(`unexpected ${again.answer.status}: ${again.answer.text}`);
            return [200, 202].includes(again.answer.status) && again;
          },
          { timeoutMs: 20_000, intervalMs: 500, what: `key ${first.key} to be usable again` },
        ),
      ),
    );
    // Settled all before failing, so no retry loop outlives the test.
    expect(retries.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []))).toEqual([]);
    const retried = retries.map((r) => (r as PromiseFulfilledResult<Submitted>).value);
    const accepted = [...all.filter((a) => a.answer.status === 202), ...retried];
    // One job per key, however many times its request was refused and retried.
    expect(new Set(accepted.map((a) => a.answer.body.id)).size).toBe(accepted.length);
    await expectEachAcceptedJobSentOnce(setup, accepted, 60_000);
  }, 180_000);
});
