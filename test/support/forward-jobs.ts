import { randomUUID } from 'node:crypto';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { createForwardingMerchant } from '../factories/forwarding-merchants';
import { listenOnLoopback } from './downstream';
import { startEntryPoint } from './entry-point';
import { http, HttpResult } from './http';
import { createIsolatedDatabase, IsolatedDatabase } from './isolated-database';
import { dropQueueKeys } from './redis-keys';
import { entryPointEnv, startTestApp, TestApp } from './test-app';
import { waitFor } from './wait';
import { allowHeavyDisclosure } from '../factories/disclosure-budgets';

export interface WorkerProcess {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exited: Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

/** `node dist/worker.js` against the run's database and Redis, resolved once it says it waits for jobs. */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = startEntryPoint('dist/worker.js', {
    env: entryPointEnv(env),
    ready: /waiting for jobs/,
    timeoutMs: 60_000,
  });
  await worker.started;
  const { child, exited } = worker;
  return {
    child,
    output: () => worker.output().all,
    exited,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ScriptedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
}

/** What the downstream does with one request: an answer, or hold it until released (or the connection goes). */
export type Step =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | { hold: true };

/**
 * A downstream whose answers per path are scripted: each request to a path takes the next step of
 * that path's script (the last one repeats); unscripted paths answer 200 with a JSON echo.
 */
export async function startScriptedDownstream() {
  const scripts = new Map<string, Step[]>();
  const received: ScriptedRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url!.split('?')[0];
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      });
      const script = scripts.get(path);
      const step: Step = script
        ? script.length > 1
          ? script.shift()!
          : script[0]
        : { status: 200, body: JSON.stringify({ echo: Buffer.concat(chunks).toString('utf8') }) };
      if ('hold' in step) {
        held.push(res);
        return;
      }
      const answer = () => {
        res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
        res.end(step.body ?? JSON.stringify({ status: step.status }));
      };
      if (step.delayMs) setTimeout(answer, step.delayMs);
      else answer();
    });
  });
  return {
    ...(await listenOnLoopback(server)),
    received,
    held,
    script(path: string, steps: Step[]) {
      scripts.set(path, [...steps]);
    },
    requestsTo(path: string) {
      return received.filter((r) => r.url.split('?')[0] === path);
    },
  };
}

/**
 * `count` queued forwards (Prefer: respond-async) to `targetUrl`, 20 at a time; the ids answered 202. A 503
 * (the queue unreachable for a moment) is counted as refused, not accepted; any other answer throws. Each
 * body carries a unique `id` (`bodyIds`: the accepted job's id → it), so a downstream can tell each job's
 * sends apart.
 */
export async function queuedLoad(
  apiUrl: string,
  token: string,
  targetUrl: string,
  count: number,
): Promise<{ accepted: string[]; refused: number; bodyIds: Map<string, string> }> {
  const accepted: string[] = [];
  const bodyIds = new Map<string, string>();
  let refused = 0;
  for (let sent = 0; sent < count; sent += 20) {
    const ids = Array.from({ length: Math.min(20, count - sent) }, () => randomUUID());
    const answers = await Promise.all(
      ids.map((id) =>
        http(apiUrl, '/vault-forward', {
          method: 'POST',
          token,
          headers: {
            prefer: 'respond-async',
            'x-vault-forward-url': targetUrl,
            'x-vault-forward-http-method': 'POST',
          },
          body: { n: sent, id },
        }),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 202) {
        accepted.push(answer.body.id as string);
        bodyIds.set(answer.body.id as string, ids[i]);
      } else if (answer.status === 503) refused++;
      else throw new Error(`unexpected ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
  }
  return { accepted, refused, bodyIds };
}

export type ScriptedDownstream = Awaited<ReturnType<typeof startScriptedDownstream>>;
export type QueuedLoad = Awaited<ReturnType<typeof queuedLoad>>;

/**
 * The environment of a test's API and worker for queued forwards: a queue of its own (so no other file's
 * jobs land on its worker), quick retries, and the local downstreams allowed over plain HTTP.
 */
export function queuedForwardEnv(queuePrefix = 'test-jobs', backend = 'redis') {
  return {
    QUEUE_BACKEND: backend,
    FORWARD_QUEUE_NAME: `${queuePrefix}-${randomUUID()}`,
    FORWARD_RETRY_BASE_MS: '20',
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
  };
}

/**
 * The queue settings of the failure tests (Redis killed, failed over, restarted): quick retries, overdue
 * after 2 s with a sweep every second, and 2 s locks, so lost jobs come back within seconds.
 */
export const FAILOVER_QUEUE_ENV = {
  QUEUE_BACKEND: 'redis',
  FORWARD_RETRY_BASE_MS: '20',
  FORWARD_INSECURE_HOSTS: '127.0.0.1',
  FORWARD_JOB_OVERDUE: '2s',
  FORWARD_JOB_SWEEP_INTERVAL: '1s',
  QUEUE_LOCK_DURATION_MS: '2000',
};

/** The API and a worker on one queue, a scripted downstream, and a merchant allowed to forward to it. */
export interface QueuedStack {
  t: TestApp;
  /** Replaceable: a test that kills the worker may start another (`startWorker(stack.env)`); `close` ends it. */
  worker: WorkerProcess;
  env: Record<string, string>;
  downstream: ScriptedDownstream;
  merchant: string;
  token: string;
  /** The id of a card stored for the merchant. */
  card: string;
  /** `queuedLoad` of `count` forwards to the downstream's `/load`. */
  load(count: number): Promise<QueuedLoad>;
  /** Loads of 20 every 200 ms until one has no 503 (the queue is reachable again; 30 s at most): all of them. */
  loadUntilAccepted(what: string): Promise<QueuedLoad[]>;
  /** Ends the worker (if still running), the API and the downstream; the caller stops its own Redis. */
  close(): Promise<void>;
}

/**
 * Starts the downstream (`/load` answers 200 after `loadDelayMs`), the test app and a worker with `env`
 * on a database of their own, and makes a merchant, its token and a config allowing `methods` to the
 * downstream. What started is closed again if a later step fails. The database is the stack's own
 * because its queue is (a private Redis): on the run's shared database, another file's overdue-job
 * sweep would enqueue this file's jobs on that file's Redis too, and both workers would claim them.
 */
export async function startQueuedStack(
  env: Record<string, string>,
  {
    loadDelayMs,
    methods = ['POST'],
    databaseUrl = (url) => url,
    postgresAdminUrl,
  }: {
    loadDelayMs: number;
    methods?: string[];
    /** The DATABASE_URL the API and worker get for the stack's database (a test's proxy in front of it, say). */
    databaseUrl?: (url: string) => string;
    /** The server the stack's database is created on (a private PostgreSQL's adminUrl); the shared one by default. */
    postgresAdminUrl?: string;
  },
): Promise<QueuedStack> {
  const downstream = await startScriptedDownstream();
  downstream.script('/load', [{ status: 200, body: '{"ok":true}', delayMs: loadDelayMs }]);
  let database: IsolatedDatabase | undefined;
  let t: TestApp | undefined;
  let worker: WorkerProcess | undefined;
  try {
    database = await createIsolatedDatabase('queued_stack', postgresAdminUrl);
    env = { ...env, DATABASE_URL: databaseUrl(database.url) };
    t = await startTestApp({ env });
    worker = await startWorker(env);
    const merchant = await createForwardingMerchant(t, downstream.port, 'x', methods);
    await allowHeavyDisclosure(t.db, merchant.id);
    const app = t;
    const stack: QueuedStack = {
      t: app,
      worker,
      env,
      downstream,
      merchant: merchant.id,
      token: merchant.token,
      card: merchant.card.id,
      load: (count) => queuedLoad(app.url, merchant.token, `${downstream.url}/load`, count),
      loadUntilAccepted: async (what) => {
        const loads: QueuedLoad[] = [];
        await waitFor(
          async () => {
            const answered = await stack.load(20);
            loads.push(answered);
            return answered.refused === 0;
          },
          { timeoutMs: 30_000, intervalMs: 200, what },
        );
        return loads;
      },
      close: async () => {
        const running = stack.worker.child;
        if (running.exitCode === null && running.signalCode === null) await stack.worker.kill();
        await app.close();
        await downstream.close();
        await database!.drop();
      },
    };
    return stack;
  } catch (error) {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) await worker.kill();
    await t?.close();
    await downstream.close();
    await database?.drop();
    throw error;
  }
}

const ENDED = ['succeeded', 'failed', 'cancelled'];

/**
 * The checks of a queued load through a failure: every job answered 202 (in `loads`) ends, and ends
 * succeeded (in one attempt, unless `anyAttempts`); the merchant has no job beyond them and `jobsBefore`
 * (a refused request left none); and the downstream got each accepted job's body id exactly once among
 * its `/load` requests after the first `sendsBefore`, and nothing else. Returns the accepted job ids.
 */
export async function expectEachSucceededOnce(
  stack: QueuedStack,
  loads: QueuedLoad[],
  options: { timeoutMs: number; jobsBefore?: number; sendsBefore?: number; anyAttempts?: boolean },
): Promise<string[]> {
  const { t, downstream, merchant } = stack;
  const accepted = loads.flatMap((l) => l.accepted);
  const bodyIds = new Map(loads.flatMap((l) => [...l.bodyIds]));
  await waitFor(
    async () => {
      const [row] = await t.db.query(
        `SELECT count(*) AS n FROM vault_forward_jobs WHERE id = ANY($1::uuid[]) AND status = ANY($2::text[])`,
        [accepted, ENDED],
      );
      return Number(row.n) === accepted.length;
    },
    { timeoutMs: options.timeoutMs, what: `all ${accepted.length} accepted jobs to end` },
  );
  const rows = await t.db.query<Array<{ status: string; attempts: number }>>(
    `SELECT status, jsonb_array_length(attempts) AS attempts FROM vault_forward_jobs WHERE id = ANY($1::uuid[])`,
    [accepted],
  );
  expect(rows).toHaveLength(accepted.length);
  expect(rows.filter((r) => r.status !== 'succeeded' || (!options.anyAttempts && Number(r.attempts) !== 1))).toEqual(
    [],
  );
  // A 503 kept no job, so the merchant's jobs are exactly the accepted ones (the run's database is shared by its
  // test files).
  const [jobs] = await t.db.query(`SELECT count(*) AS n FROM vault_forward_jobs WHERE merchant_account_id = $1`, [
    merchant,
  ]);
  expect(Number(jobs.n)).toBe((options.jobsBefore ?? 0) + accepted.length);
  // Each job exactly once, by the unique id in its body, and nothing else sent.
  const sent = downstream.requestsTo('/load').slice(options.sendsBefore ?? 0);
  const sends = new Map<string, number>();
  for (const request of sent) {
    const id = (JSON.parse(request.body.toString('utf8')) as { id: string }).id;
    sends.set(id, (sends.get(id) ?? 0) + 1);
  }
  expect([...bodyIds.values()].filter((id) => sends.get(id) !== 1)).toEqual([]);
  expect(sends.size).toBe(bodyIds.size);
  expect(sent).toHaveLength(accepted.length);
  return accepted;
}

/**
 * Stops what a test with a queue started, each part only if it was started: the worker with SIGTERM (a clean
 * stop, waited for), the API, the downstream, then the queue's keys in the shared Redis when the queue is there.
 */
export async function stopQueuedSetup(
  s:
    | {
        env: { QUEUE_BACKEND?: string; FORWARD_QUEUE_NAME?: string };
        worker?: WorkerProcess;
        t?: TestApp;
        downstream?: { close(): Promise<void> };
      }
    | undefined,
): Promise<void> {
  if (!s) return;
  if (s.worker) {
    s.worker.child.kill('SIGTERM');
    await s.worker.exited;
  }
  await s.t?.close();
  await s.downstream?.close();
  if (s.env.QUEUE_BACKEND === 'redis' && s.env.FORWARD_QUEUE_NAME) await dropQueueKeys(s.env.FORWARD_QUEUE_NAME);
}

/** The queued job `id` once it has ended (succeeded or failed), read through the API; 20 s at most by default. */
export function endedJob(url: string, token: string, id: string, timeoutMs = 20_000): Promise<HttpResult> {
  return waitFor(
    async () => {
      const read = await http(url, `/vault-forward/jobs/${id}`, { token });
      return ['succeeded', 'failed'].includes(read.body.status) && read;
    },
    { timeoutMs, what: 'the queued forward to end' },
  );
}

/** The forward record `id` once its outcome is written (on record with status null before the card left), read through the API. */
export function recordWithOutcome(url: string, token: string, id: string): Promise<HttpResult> {
  return waitFor(
    async () => {
      const r = await http(url, `/vault-forward/requests/${id}`, { token });
      return r.status === 200 && r.body.status !== null && r;
    },
    { what: 'the record with its outcome' },
  );
}
