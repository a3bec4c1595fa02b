import { randomUUID } from 'node:crypto';
import { createApiKey } from '../factories/api-keys';
import { createMerchantAccount } from '../factories/merchant-accounts';
import { EntryPoint, startEntryPoint } from '../support/entry-point';
import { startWorker, WorkerProcess } from '../support/forward-jobs';
import { http } from '../support/http';
import {
  CONNECTION_ERRORS,
  forwardLoad,
  Outcome,
  pidOfConnection,
  startCountingDownstream,
} from '../support/process-group-load';
import { dropQueueKeys } from '../support/redis-keys';
import { entryPointEnv, startTestApp, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait';

/**
 * SIGKILL of one process of a group (app/bootstrap/processes.ts) under load loses nothing the group
 * accepted (issue 24's acceptance for WEB_CONCURRENCY, and WORKER_PROCESSES likewise). The compiled
 * entry points run as an operator runs them; the downstream is a real HTTP server here that counts the
 * unique id each forward carries. An in-process API (the run's database) creates the merchant and key.
 */
describe('Process groups: SIGKILL of one process loses no accepted forward', () => {
  const queueName = `test-group-kill-${randomUUID()}`;
  const env = {
    QUEUE_BACKEND: 'redis',
    FORWARD_QUEUE_NAME: queueName,
    FORWARD_INSECURE_HOSTS: '127.0.0.1',
    CURSOR_SECRET: 'test-cursor-secret-not-for-production-0123456789',
    // A killed worker's jobs are handed on once their lock lapses: 2 s instead of 10 s keeps the test short.
    QUEUE_LOCK_DURATION_MS: '2000',
  };
  let t: TestApp;
  let token: string;
  const groups: EntryPoint[] = [];
  const workers: WorkerProcess[] = [];

  const jsonLines = (group: EntryPoint): Array<Record<string, any>> =>
    group
      .output()
      .stdout.split('\n')
      .flatMap((line) => {
        try {
          return line.startsWith('{') ? [JSON.parse(line) as Record<string, any>] : [];
        } catch {
          return []; // a line cut by the kill
        }
      });
  /** Every 202's job, looked up through the API once the rows say they all ended. */
  const jobsOf = async (ids: string[]) => {
    await waitFor(
      async () => {
        const [row] = await t.db.query(
          `SELECT count(*)::int AS n FROM vault_forward_jobs WHERE id = ANY($1) AND status IN ('succeeded', 'failed', 'cancelled')`,
          [ids],
        );
        return row.n === ids.length;
      },
      { timeoutMs: 90_000, intervalMs: 200, what: `${ids.length} queued forwards to end` },
    );
    const jobs = [];
    for (const id of ids) jobs.push((await http(t.url, `/vault-forward/jobs/${id}`, { token })).body);
    return jobs;
  };
  const configFor = async (port: number) =>
    expect(
      (
        await http(t.url, '/vault-forward/configs', {
          method: 'POST',
          token,
          body: { display_name: `group ${port}`, hosts: [`127.0.0.1:${port}`], methods: ['POST', 'PUT'] },
        })
      ).status,
    ).toBe(201);

  beforeAll(async () => {
    t = await startTestApp({ env });
    const merchant = (await createMerchantAccount(t)).id;
    token = await (await createApiKey(t, merchant)).token(['*.read', '*.write'], 3600);
  }, 60_000);

  afterAll(async () => {
    for (const group of groups) {
      if (group.child.exitCode === null && group.child.signalCode === null) {
        group.child.kill('SIGTERM');
        await group.exited;
      }
    }
    for (const worker of workers) if (worker.child.exitCode === null) await worker.kill();
    await t?.close();
    await dropQueueKeys(queueName);
  }, 90_000);

  it('WEB_CONCURRENCY=2: two processes answer; SIGKILL of one under synchronous and queued forwards loses no answered one', async () => {
    const downstream = await startCountingDownstream(10, () => undefined);
    try {
      await configFor(downstream.port);
      workers.push(await startWorker(env));
      const api = startEntryPoint('dist/main.js', {
        env: entryPointEnv({ ...env, PORT: '0', WEB_CONCURRENCY: '2' }),
        ready: /API listening on[\s\S]*API listening on (http:\/\/\S+) /,
        timeoutMs: 90_000,
      });
      groups.push(api);
      const url = (await api.started)[1];
      const listening = () => jsonLines(api).filter((line) => /^API listening on /.test(line.msg));
      const pidsByRequest = () =>
        new Map(
          jsonLines(api)
            .filter((line) => line.msg === 'request completed' && line.req?.id)
            .map((line) => [line.req.id as string, line.pid as number]),
        );
      const [victim, survivor] = listening().map((line) => line.pid as number);
      expect(new Set([victim, survivor, api.child.pid]).size).toBe(3);

      const load = forwardLoad({ url, token, target: downstream.url, loops: 6 });
      const answeredBy = (pid: number, kind: Outcome['kind']) => {
        const pids = pidsByRequest();
        return load.outcomes.filter((o) => o.kind === kind && o.status !== undefined && pids.get(o.requestId!) === pid);
      };
      let killedAt = 0;
      let replacedAt = 0;
      try {
        // Both processes serve both kinds before the kill.
        await waitFor(
          () =>
            [victim, survivor].every(
              (pid) => answeredBy(pid, 'sync').length >= 5 && answeredBy(pid, 'queued').length >= 5,
            ),
          { timeoutMs: 60_000, intervalMs: 100, what: 'both processes to answer synchronous and queued forwards' },
        );
        process.kill(victim, 'SIGKILL');
        killedAt = Date.now();
        await waitFor(() => listening().length === 3, { timeoutMs: 60_000, what: 'a replacement process' });
        replacedAt = Date.now();
        // The load goes on across the kill and the replacement's start, and both kinds keep being answered.
        const after = () => load.outcomes.filter((o) => o.sentAt > replacedAt && o.status !== undefined);
        await waitFor(() => after().filter((o) => o.kind === 'queued').length >= 20, {
          timeoutMs: 60_000,
          intervalMs: 100,
          what: 'forwards answered after the replacement started',
        });
      } finally {
        await load.stop();
      }
      const replacement = listening()[2].pid as number;
      const answered = load.outcomes.filter((o) => o.status !== undefined);
      // A process writes its request log line once the answer is out: the last ones may trail the answers a little.
      await waitFor(() => answered.every((o) => o.sentAt <= killedAt || pidsByRequest().has(o.requestId!)), {
        what: 'the log lines of every answer after the kill',
      });
      const pids = pidsByRequest();
      const cut = load.outcomes.filter((o) => o.error !== undefined);
      process.stdout.write(
        `WEB_CONCURRENCY=2 kill: ${answered.length} answered, ${cut.length} cut (${cut.map((o) => o.error).join(', ')})\n`,
      );

      // Every answer is a success from a process of the group, and after the kill only from the others.
      expect(answered.filter((o) => !(o.kind === 'sync' ? o.status === 200 : o.status === 202))).toEqual([]);
      for (const o of answered) {
        const pid = pids.get(o.requestId!);
        if (o.sentAt > killedAt) expect([survivor, replacement]).toContain(pid);
        // The victim's log line for an answer it wrote just before its death may be lost with it.
        else if (pid !== undefined) expect([victim, survivor]).toContain(pid);
      }
      expect(answered.some((o) => o.sentAt > killedAt && pids.get(o.requestId!) === survivor)).toBe(true);
      // What the kill cut got a connection error, nothing else, and only until the replacement served.
      for (const o of cut) {
        expect(CONNECTION_ERRORS).toContain(o.error);
        expect(o.sentAt).toBeLessThan(replacedAt);
      }

      // Complete: each synchronous answer is the downstream's answer to that forward, sent once.
      for (const o of answered.filter((a) => a.kind === 'sync')) {
        expect(o.body).toEqual({ id: o.id });
        expect(downstream.seen.get(o.id)).toBe(1);
      }
      // Each 202 ends succeeded, its forward seen exactly once by the downstream.
      const queued = answered.filter((o) => o.kind === 'queued');
      const jobs = await jobsOf(queued.map((o) => o.body.id as string));
      expect(jobs.filter((job) => job.status !== 'succeeded')).toEqual([]);
      for (const o of queued) expect(downstream.seen.get(o.id)).toBe(1);
      // Nothing reached the downstream twice, cut or not.
      expect([...downstream.seen.values()].filter((n) => n !== 1)).toEqual([]);
    } finally {
      for (const w of workers.splice(0)) if (w.child.exitCode === null) await w.kill();
      await downstream.close();
    }
  }, 240_000);

  it('WORKER_PROCESSES=2: both processes take jobs; SIGKILL of one strands none', async () => {
    let workerPids: number[] = [];
    let victim: number | undefined;
    // The victim's forwards get no answer, so its kill always cuts attempts in flight.
    const downstream = await startCountingDownstream(
      30,
      (port) => pidOfConnection(port, downstream.port, workerPids),
      (sender) => sender !== undefined && sender === victim,
    );
    try {
      await configFor(downstream.port);
      const group = startEntryPoint('dist/worker.js', {
        env: entryPointEnv({ ...env, WORKER_PROCESSES: '2', WORKER_CONCURRENCY: '4' }),
        ready: /waiting for jobs[\s\S]*waiting for jobs/,
        timeoutMs: 90_000,
      });
      groups.push(group);
      await group.started;
      const ready = () => jsonLines(group).filter((line) => /waiting for jobs/.test(line.msg));
      workerPids = ready().map((line) => line.pid as number);
      const survivor = workerPids[1];
      victim = workerPids[0];
      expect(new Set([victim, survivor, group.child.pid]).size).toBe(3);

      // 300 queued forwards, 20 at a time, each with its own id; the kill comes while they run. Half are PUTs,
      // which a worker's loss lets run again; half POSTs without Idempotency-Key, which it does not (decision 0054:
      // they may have been sent), so the kill may end one `failed`, never stranded and never sent twice.
      const sent = new Map<string, { id: string; method: string }>(); // job id → forward id and method
      const enqueue = async (count: number) => {
        for (let n = 0; n < count; n += 20) {
          await Promise.all(
            Array.from({ length: 20 }, async (_, i) => {
              const id = randomUUID();
              const method = i % 2 === 0 ? 'PUT' : 'POST';
              const answer = await http(t.url, '/vault-forward', {
                method: 'POST',
                token,
                headers: {
                  prefer: 'respond-async',
                  'x-vault-forward-url': `${downstream.url}/queued`,
                  'x-vault-forward-http-method': method,
                },
                body: { id },
              });
              expect(answer.status).toBe(202);
              sent.set(answer.body.id as string, { id, method });
            }),
          );
        }
      };
      const takenBy = (pid: number) => [...downstream.senders.values()].filter((sender) => sender === pid).length;
      const enqueued = enqueue(300);
      // The victim holds WORKER_CONCURRENCY (4) unanswered forwards; the survivor goes on.
      await waitFor(() => takenBy(victim!) >= 4 && takenBy(survivor) >= 5, {
        timeoutMs: 60_000,
        intervalMs: 20,
        what: 'both worker processes to take jobs',
      });
      process.kill(victim, 'SIGKILL');
      await waitFor(() => ready().length === 3, { timeoutMs: 60_000, what: 'a replacement worker process' });
      workerPids = [...workerPids, ready()[2].pid as number];
      await enqueued;

      const jobs = await jobsOf([...sent.keys()]);
      process.stdout.write(
        `WORKER_PROCESSES=2 kill: ${jobs.length} jobs; taken by victim ${takenBy(victim)}, survivor ` +
          `${takenBy(survivor)}, replacement ${takenBy(workerPids[2])}\n`,
      );
      const lost = (job: { attempts: Array<{ error_type?: string }> }) =>
        job.attempts.some((attempt) => attempt.error_type === 'outcome-unknown');
      for (const job of jobs) {
        const { id, method } = sent.get(job.id)!;
        const seen = downstream.seen.get(id) ?? 0;
        if (method === 'PUT' || !lost(job)) {
          // Ended succeeded; only an attempt the kill cut may have reached the downstream a second time.
          expect({ job: job.id, status: job.status }).toEqual({ job: job.id, status: 'succeeded' });
          expect(seen).toBeGreaterThanOrEqual(1);
          if (seen > 1) expect(lost(job)).toBe(true);
        } else {
          // A POST whose worker was killed mid-attempt: ended, with the attempt saying why, and sent at most once.
          expect(job).toMatchObject({ status: 'failed', attempts: [{ error_type: 'outcome-unknown' }] });
          expect(seen).toBeLessThanOrEqual(1);
        }
      }
      expect(jobs.filter((job) => lost(job)).length).toBeGreaterThan(0);
    } finally {
      await downstream.close();
    }
  }, 240_000);
});
