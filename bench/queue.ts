/**
 * npm run bench:queue — queued forwarding (Prefer: respond-async) end to end, on each queue engine
 * side by side (QUEUE_BACKEND=redis, then postgres; BENCH_QUEUE_BACKENDS to choose): the compiled API
 * and ONE compiled worker process (WORKER_CONCURRENCY, default 32), a local echo downstream, and
 * BENCH_QUEUE_JOBS (default 20,000) forwards with one card each, sent by autocannon while the worker
 * already runs. Prints the enqueue rate (202s per second), the completion rate (jobs ended per second,
 * from the first request to the last job ended) and the CPU the API and the worker spent per job.
 *
 * BENCH_PGBOUNCER=1: the API and the worker reach PostgreSQL through a PgBouncer of the bench's own in
 * transaction mode (BENCH_PGBOUNCER_POOL_SIZE server connections, default 20), as decision 0108 runs
 * them: DATABASE_TRANSACTION_POOLING=true, BullMQ's PostgreSQL engine over DATABASE_DIRECT_URL.
 * BENCH_UNNAMED_STATEMENTS=1 without it: DATABASE_TRANSACTION_POOLING=true straight on PostgreSQL, to tell the
 * cost of unnamed statements from the cost of the pooler's hop.
 *
 * BENCH_QUEUE_LEDGER=on,off (the default) runs each engine with the disclosure ledger on and off in turn
 * (LEDGER_ENABLED, decision 0133) and prints what the ledger costs per job, in CPU over all processes and in
 * completed jobs per second; `on` alone skips the comparison.
 *
 * BENCH_DIST runs another build (bench-api.ts), to compare two commits in alternating runs.
 *
 * Issue 49: before the timed runs, each engine runs BENCH_QUEUE_COUNT_JOBS (default 500) jobs with the API and
 * the worker each behind a PostgreSQL counting proxy (test/support/postgres-counter.ts) and on a private Redis,
 * and prints per job the PostgreSQL statements and round trips of each, and the Redis commands (a script's own
 * included) and reads (INFO's total_reads_processed: one per batch of commands a client sends). And BullMQ's own
 * ceiling, a Worker with a processor that does nothing (bench/bullmq-noop.ts), is measured on each engine in the
 * same run; the targets are printed met / NOT met: on Redis with one worker at least 0.4 of that ceiling, on
 * PostgreSQL at least 400 completed jobs per second.
 *
 * BENCH_WORKERS=1,2,3 runs each engine with that many worker processes (WORKER_PROCESSES) in turn; the
 * worker CPU per job is then the group's, and per process that divided by the count. Each row also
 * gives the PostgreSQL commits (the run's database) and Redis commands (INFO commandstats; a private
 * Redis via BENCH_REDIS_URL gives a clean count) per job.
 */
import 'reflect-metadata';
import { ChildProcess, fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import autocannon from 'autocannon';
import Redis from 'ioredis';
import { createDataSource } from '../src/platform/database/data-source';
import { dropQueueKeys } from '../test/support/redis-keys';
import { PrivatePgBouncer } from '../test/support/private-pgbouncer';
import { PostgresCounter, PostgresCounts } from '../test/support/postgres-counter';
import { PrivateRedis } from '../test/support/private-redis';
import { ADMIN_URL, BENCH_API_ENV, benchDatabase, benchMerchantToken, DIST, REDIS_URL, startApi } from './bench-api';
import {
  children,
  commandCpuMs,
  cpuMs,
  cpuSpentMs,
  databaseBackendsCpuMs,
  databaseCommits,
  forkServer,
  machineCpuMs,
  postJson,
  redisCommands,
  stopChild,
  treeCpuMs,
} from './support';
import { readFileSync } from 'node:fs';

const JOBS = Number(process.env.BENCH_QUEUE_JOBS ?? 20_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BACKENDS = (process.env.BENCH_QUEUE_BACKENDS ?? 'redis,postgres').split(',') as Array<'redis' | 'postgres'>;
const WORKERS = (process.env.BENCH_WORKERS ?? '1').split(',').map(Number);
const LEDGER = (process.env.BENCH_QUEUE_LEDGER ?? 'on,off').split(',') as Array<'on' | 'off'>;
const COUNT_JOBS = Number(process.env.BENCH_QUEUE_COUNT_JOBS ?? 500);
/** Issue 49's targets: on Redis, one worker, this share of BullMQ's no-op ceiling; on PostgreSQL, jobs per second. */
const REDIS_CEILING_SHARE = 0.4;
const POSTGRES_JOBS_PER_SECOND = 400;
const BODY = JSON.stringify({
  card: { number: '{{ CARD_NUMBER_1 }}', expiry: '{{ CARD_EXPIRATION_DATE_1 }}', cvv: '123' },
  amount: 1299,
});

/** BENCH_CPU_PROF=DIR: each process writes a V8 CPU profile there on exit (node --cpu-prof). */
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const PROFILE = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [];

const PGBOUNCER = process.env.BENCH_PGBOUNCER === '1';
const PGBOUNCER_POOL_SIZE = Number(process.env.BENCH_PGBOUNCER_POOL_SIZE ?? 20);
const UNNAMED = process.env.BENCH_UNNAMED_STATEMENTS === '1';

async function startWorker(env: Record<string, string>, processes: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...PROFILE, join(DIST, 'worker.js')], {
    env: { PATH: process.env.PATH!, ...env, LOG_LEVEL: 'info', WORKER_PROCESSES: String(processes) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // Each process of a group says it once.
      if ((out.match(/waiting for jobs/g) ?? []).length >= processes) resolve();
      if (out.length > 100_000) out = out.slice(-10_000);
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  return child;
}

interface EngineResult {
  accepted: number;
  refused: number;
  enqueueSeconds: number;
  endedSeconds: number;
  succeeded: number;
  failed: number;
  apiCpuUsPerJob: number;
  workerCpuUsPerJob: number;
  postgresCpuUsPerJob: number;
  /** The run's database's backends only (a shared server's other users left out; its WAL writer too). */
  backendsCpuUsPerJob: number;
  redisCpuUsPerJob: number;
  pgbouncerCpuUsPerJob: number;
  commitsPerJob: number;
  redisCommandsPerJob: number;
  /** Share of both cores busy (anything on the machine) from the first request to the last job ended. */
  machineBusy: number;
  /** A counting run's figures per job (issue 49), else null. */
  counted: CountedPerJob | null;
}

/** What a counting run saw per job: PostgreSQL from the API and from the worker, and the private Redis. */
interface CountedPerJob {
  api: PostgresCounts;
  worker: PostgresCounts;
  redisCommands: number;
  redisReads: number;
}

/** The seams a counting run goes through: a PostgreSQL counter for the API, one for the worker, a Redis of its own. */
interface Counting {
  api: PostgresCounter;
  worker: PostgresCounter;
  redis: PrivateRedis;
}

/** Redis's own count of the commands it ran and of the reads of its clients' sockets (INFO stats). */
async function redisStats(url: string): Promise<{ commands: number; reads: number }> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info('stats');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
    return { commands: field('total_commands_processed'), reads: field('total_reads_processed') };
  } finally {
    redis.disconnect();
  }
}

async function runEngine(
  backend: 'redis' | 'postgres',
  workers: number,
  echoPort: number,
  admin: Client,
  bouncer: PrivatePgBouncer | null,
  ledger: 'on' | 'off',
  counting: Counting | null = null,
): Promise<EngineResult> {
  const jobs = counting ? COUNT_JOBS : JOBS;
  const database = await benchDatabase(admin, `queue_${backend}`);
  const env = {
    ...BENCH_API_ENV,
    DATABASE_URL: database.url,
    ...(UNNAMED ? { DATABASE_TRANSACTION_POOLING: 'true', DATABASE_DIRECT_URL: database.url } : {}),
    ...(bouncer
      ? {
          DATABASE_URL: bouncer.urlFor(database.url),
          DATABASE_TRANSACTION_POOLING: 'true',
          DATABASE_DIRECT_URL: database.url,
        }
      : {}),
    REDIS_URL: counting?.redis.url ?? REDIS_URL,
    QUEUE_BACKEND: backend,
    FORWARD_QUEUE_NAME: `bench-${backend}-${randomUUID()}`,
    LEDGER_ENABLED: String(ledger === 'on'),
  };
  /** Each process's own database URL: through its counter in a counting run. */
  const through = (counter: PostgresCounter | undefined) =>
    counter ? { ...env, DATABASE_URL: counter.urlFor(env.DATABASE_URL) } : env;
  const started: ChildProcess[] = [];
  try {
    const { url: api, process: apiProcess } = await startApi(through(counting?.api), { profileDir: PROFILE_DIR });
    started.push(apiProcess);
    const token = await benchMerchantToken(database.url);
    const db = createDataSource({ url: database.url, poolSize: 2, entities: [] });
    await db.initialize();
    await postJson(`${api}/vault-forward/configs`, token, { display_name: 'Echo', hosts: [`127.0.0.1:${echoPort}`] });
    const card = await postJson(`${api}/payment-methods`, token, {
      method: 'card',
      number: '4111111111111111',
      expiration_date: '12/30',
    });
    const worker = await startWorker(through(counting?.worker), workers);
    started.push(worker);

    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      prefer: 'respond-async',
      'x-vault-forward-url': `http://127.0.0.1:${echoPort}/charge`,
      'x-vault-forward-http-method': 'PUT',
      'x-vault-forward-payment-methods': card.id,
    };
    const commitsBefore = await databaseCommits(admin, database.url);
    const commandsBefore = await redisCommands(env.REDIS_URL);
    const countedBefore = counting
      ? { api: counting.api.read(), worker: counting.worker.read(), redis: await redisStats(counting.redis.url) }
      : null;
    const apiBefore = cpuMs(apiProcess.pid);
    const workerBefore = treeCpuMs(worker.pid);
    const postgresBefore = commandCpuMs('postgres');
    const backendsBefore = databaseBackendsCpuMs(database.url);
    const redisBefore = commandCpuMs('redis-server');
    const pgbouncerBefore = commandCpuMs('pgbouncer');
    const machineBefore = machineCpuMs();
    const t0 = Date.now();
    const load = await autocannon({
      url: `${api}/vault-forward`,
      method: 'POST',
      headers,
      body: BODY,
      connections: CONNECTIONS,
      amount: jobs,
    });
    const apiAfter = cpuMs(apiProcess.pid);
    const accepted = load['2xx'];
    let ended = { succeeded: 0, failed: 0 };
    for (;;) {
      const [row] = await db.query<Array<{ succeeded: number; failed: number }>>(
        `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status IN ` +
          `('failed', 'cancelled'))::int AS failed FROM vault_forward_jobs`,
      );
      ended = row;
      if (row.succeeded + row.failed >= accepted) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // autocannon settles on its one-second tick, which would round a 15 s run by up to 7 %: the times come
    // from the rows instead (same machine, same clock), the last job created and the last one ended.
    const [times] = await db.query<Array<{ created: number; finished: number }>>(
      `SELECT extract(epoch FROM max(created_at)) * 1000 AS created, extract(epoch FROM max(finished_at)) * 1000 AS finished
         FROM vault_forward_jobs`,
    );
    const enqueueSeconds = (Number(times.created) - t0) / 1000;
    const endedSeconds = (Number(times.finished) - t0) / 1000;
    const workerAfter = treeCpuMs(worker.pid);
    const perJob = (n: number) => n / Math.max(1, accepted);
    const countsPerJob = (after: PostgresCounts, before: PostgresCounts) => ({
      roundTrips: perJob(after.roundTrips - before.roundTrips),
      statements: perJob(after.statements - before.statements),
    });
    const redisAfter = counting ? await redisStats(counting.redis.url) : null;
    const counted =
      counting && countedBefore && redisAfter
        ? {
            api: countsPerJob(counting.api.read(), countedBefore.api),
            worker: countsPerJob(counting.worker.read(), countedBefore.worker),
            redisCommands: perJob(redisAfter.commands - countedBefore.redis.commands),
            redisReads: perJob(redisAfter.reads - countedBefore.redis.reads),
          }
        : null;
    const postgresMs = cpuSpentMs(postgresBefore, commandCpuMs('postgres'));
    const backendsMs = cpuSpentMs(backendsBefore, databaseBackendsCpuMs(database.url));
    const redisMs = cpuSpentMs(redisBefore, commandCpuMs('redis-server'));
    const pgbouncerMs = cpuSpentMs(pgbouncerBefore, commandCpuMs('pgbouncer'));
    const machineAfter = machineCpuMs();
    await db.destroy();
    const commits = (await databaseCommits(admin, database.url)) - commitsBefore;
    const commands = (await redisCommands(env.REDIS_URL)) - commandsBefore;
    type Cpu = { user: number; system: number } | null;
    const cpuPerJob = (after: Cpu, before: Cpu) =>
      after && before
        ? ((after.user + after.system - before.user - before.system) * 1000) / Math.max(1, accepted)
        : NaN;
    return {
      accepted,
      refused: load.non2xx + load.errors,
      enqueueSeconds,
      endedSeconds,
      succeeded: ended.succeeded,
      failed: ended.failed,
      apiCpuUsPerJob: cpuPerJob(apiAfter, apiBefore),
      workerCpuUsPerJob: cpuPerJob(workerAfter, workerBefore),
      postgresCpuUsPerJob: (postgresMs * 1000) / Math.max(1, accepted),
      backendsCpuUsPerJob: (backendsMs * 1000) / Math.max(1, accepted),
      redisCpuUsPerJob: (redisMs * 1000) / Math.max(1, accepted),
      pgbouncerCpuUsPerJob: (pgbouncerMs * 1000) / Math.max(1, accepted),
      commitsPerJob: commits / Math.max(1, accepted),
      redisCommandsPerJob: commands / Math.max(1, accepted),
      machineBusy: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
      counted,
    };
  } finally {
    await Promise.all(started.map(stopChild));
    await database.drop();
    // 20,000 finished jobs' keys would otherwise stay in the shared Redis for every later SCAN to walk.
    if (backend === 'redis' && !counting) await dropQueueKeys(env.FORWARD_QUEUE_NAME, REDIS_URL);
  }
}

/**
 * BullMQ's own no-op run on an engine (bench/bullmq-noop.ts), in a process of its own: `jobs` jobs, completed
 * jobs per second. With `counting`, through its counter and Redis, and what it cost them per job.
 */
async function noopRun(
  engine: 'redis' | 'postgres',
  admin: Client,
  jobs: number,
  counting?: { postgres: PostgresCounter; redis: PrivateRedis },
): Promise<{ jobsPerSecond: number; postgres?: PostgresCounts; redisCommands?: number; redisReads?: number }> {
  const database = engine === 'postgres' ? await benchDatabase(admin, 'noop') : null;
  const redisUrl = counting?.redis.url ?? REDIS_URL;
  try {
    const before = counting && { postgres: counting.postgres.read(), redis: await redisStats(redisUrl) };
    const child = fork(join(__dirname, 'bullmq-noop.js'), {
      env: {
        PATH: process.env.PATH!,
        BENCH_NOOP_ENGINE: engine,
        BENCH_NOOP_JOBS: String(jobs),
        REDIS_URL: redisUrl,
        ...(database ? { DATABASE_URL: counting ? counting.postgres.urlFor(database.url) : database.url } : {}),
        ...(process.env.WORKER_CONCURRENCY ? { WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY } : {}),
      },
      stdio: 'inherit',
    });
    children.push(child);
    // Its figure, then its exit: its connections are gone before the Redis or the database it used.
    let reported: number | null = null;
    child.on('message', (m: { jobsPerSecond: number }) => (reported = m.jobsPerSecond));
    const jobsPerSecond = await new Promise<number>((resolve, reject) =>
      child.once('exit', (code) =>
        reported === null ? reject(new Error(`bullmq-noop (${engine}) exited with ${code}`)) : resolve(reported),
      ),
    );
    if (!counting || !before) return { jobsPerSecond };
    const after = { postgres: counting.postgres.read(), redis: await redisStats(redisUrl) };
    return {
      jobsPerSecond,
      postgres: {
        statements: (after.postgres.statements - before.postgres.statements) / jobs,
        roundTrips: (after.postgres.roundTrips - before.postgres.roundTrips) / jobs,
      },
      redisCommands: (after.redis.commands - before.redis.commands) / jobs,
      redisReads: (after.redis.reads - before.redis.reads) / jobs,
    };
  } finally {
    await database?.drop();
  }
}

/**
 * A counting run of an engine (COUNT_JOBS jobs, ledger on, one worker) through its own counters and Redis, and
 * BullMQ's no-op run through the same: what a job costs us, and what it costs BullMQ alone.
 */
async function countEngine(
  backend: 'redis' | 'postgres',
  echoPort: number,
  admin: Client,
): Promise<{ ours: CountedPerJob; noop: Awaited<ReturnType<typeof noopRun>> }> {
  const counting = {
    api: await PostgresCounter.start(ADMIN_URL),
    worker: await PostgresCounter.start(ADMIN_URL),
    redis: await PrivateRedis.start(),
  };
  try {
    const ours = (await runEngine(backend, 1, echoPort, admin, null, 'on', counting)).counted!;
    const noop = await noopRun(backend, admin, COUNT_JOBS, { postgres: counting.worker, redis: counting.redis });
    return { ours, noop };
  } finally {
    await counting.api.close();
    await counting.worker.close();
    await counting.redis.kill();
  }
}

async function main(): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  let bouncer: PrivatePgBouncer | null = null;
  try {
    const echo = await forkServer('echo-server.js');
    bouncer = PGBOUNCER
      ? await PrivatePgBouncer.start({ poolMode: 'transaction', poolSize: PGBOUNCER_POOL_SIZE })
      : null;
    // Issue 49: what a job costs in statements and round trips, and BullMQ's own ceiling, in this run.
    const counted = new Map<string, Awaited<ReturnType<typeof countEngine>>>();
    const ceilings = new Map<string, number>();
    for (const backend of BACKENDS) {
      counted.set(backend, await countEngine(backend, echo.port, admin));
      ceilings.set(backend, (await noopRun(backend, admin, JOBS)).jobsPerSecond);
    }
    const results: Array<{ backend: string; workers: number; ledger: 'on' | 'off'; r: EngineResult }> = [];
    // Interleaved: each worker count on each engine, ledger on and off, so the machine's load falls on all alike.
    for (const workers of WORKERS)
      for (const backend of BACKENDS)
        for (const ledger of LEDGER)
          results.push({
            backend,
            workers,
            ledger,
            r: await runEngine(backend, workers, echo.port, admin, bouncer, ledger),
          });
    console.log(
      `\n${JOBS} queued forwards (one card each, ${CONNECTIONS} connections), worker processes ${WORKERS.join(', ')} ` +
        `(WORKER_CONCURRENCY ${process.env.WORKER_CONCURRENCY ?? 32} each), local echo downstream` +
        (bouncer ? `, through PgBouncer (transaction mode, pool size ${PGBOUNCER_POOL_SIZE})` : '') +
        (UNNAMED && !bouncer ? ', unnamed statements (DATABASE_TRANSACTION_POOLING=true) on PostgreSQL directly' : '') +
        '\n',
    );
    console.log(
      '| engine | ledger | worker processes | 202s | refused | enqueue 202/s | all ended after s | completed jobs/s | succeeded | ' +
        "failed | API CPU µs/job | workers CPU µs/job (per process) | PostgreSQL CPU µs/job (this database's backends) | " +
        'Redis CPU µs/job | PgBouncer CPU µs/job | ' +
        'PostgreSQL commits/job | Redis commands/job | machine busy |',
    );
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const cpuPerJob = (r: EngineResult) =>
      r.apiCpuUsPerJob + r.workerCpuUsPerJob + r.postgresCpuUsPerJob + r.redisCpuUsPerJob + r.pgbouncerCpuUsPerJob;
    for (const { backend, workers, ledger, r } of results) {
      const cells = [
        backend,
        ledger,
        workers,
        r.accepted,
        r.refused,
        (r.accepted / r.enqueueSeconds).toFixed(0),
        r.endedSeconds.toFixed(1),
        (r.accepted / r.endedSeconds).toFixed(0),
        r.succeeded,
        r.failed,
        r.apiCpuUsPerJob.toFixed(0),
        `${r.workerCpuUsPerJob.toFixed(0)} (${(r.workerCpuUsPerJob / workers).toFixed(0)})`,
        `${r.postgresCpuUsPerJob.toFixed(0)} (${r.backendsCpuUsPerJob.toFixed(0)})`,
        r.redisCpuUsPerJob.toFixed(0),
        r.pgbouncerCpuUsPerJob.toFixed(0),
        r.commitsPerJob.toFixed(2),
        r.redisCommandsPerJob.toFixed(1),
        `${(r.machineBusy * 100).toFixed(0)} %`,
      ];
      console.log(`| ${cells.join(' | ')} |`);
    }
    console.log(
      `\nPer job (${COUNT_JOBS} jobs, ledger on, one worker; each process behind a PostgreSQL counting proxy, a ` +
        "Redis of the run's own), ours and BullMQ's no-op run's (its adds included):\n\n" +
        "| engine | PostgreSQL statements / round trips: API | worker | BullMQ no-op | Redis commands (scripts' " +
        "own included): ours | BullMQ no-op | Redis reads (round trips): ours | BullMQ no-op | BullMQ's no-op " +
        'ceiling, one worker, jobs/s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const [backend, { ours, noop }] of counted) {
      const pg = (x: PostgresCounts | undefined) =>
        x ? `${x.statements.toFixed(2)} / ${x.roundTrips.toFixed(2)}` : '';
      const cells = [
        backend,
        pg(ours.api),
        pg(ours.worker),
        pg(noop.postgres),
        ours.redisCommands.toFixed(1),
        noop.redisCommands?.toFixed(1),
        ours.redisReads.toFixed(2),
        noop.redisReads?.toFixed(2),
        ceilings.get(backend)!.toFixed(0),
      ];
      console.log(`| ${cells.join(' | ')} |`);
    }
    // Issue 49's targets, one worker process, ledger on.
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    for (const { backend, workers, ledger, r } of results) {
      if (workers !== 1 || ledger !== 'on') continue;
      const rate = r.accepted / r.endedSeconds;
      const ceiling = ceilings.get(backend)!;
      const share = rate / ceiling;
      console.log(
        `${backend}: ${rate.toFixed(0)} completed jobs/s, ${share.toFixed(2)} of BullMQ's no-op ceiling ` +
          `(${ceiling.toFixed(0)} jobs/s) in this run; CPU per job over all processes ${cpuPerJob(r).toFixed(0)} µs` +
          (backend === 'redis'
            ? ` (target ≥ ${REDIS_CEILING_SHARE} of the ceiling, issue 49: ${verdict(share >= REDIS_CEILING_SHARE)})`
            : ` (target ≥ ${POSTGRES_JOBS_PER_SECOND} jobs/s, issue 49: ${verdict(rate >= POSTGRES_JOBS_PER_SECOND)})`),
      );
    }
    // Decision 0133: what the ledger costs a queued forward, each engine and worker count, on minus off.
    for (const on of results.filter((x) => x.ledger === 'on')) {
      const off = results.find((x) => x.ledger === 'off' && x.backend === on.backend && x.workers === on.workers);
      if (!off) continue;
      const rate = (x: EngineResult) => x.accepted / x.endedSeconds;
      console.log(
        `ledger cost per job, ${on.backend}, ${on.workers} worker process(es): ` +
          `${(cpuPerJob(on.r) - cpuPerJob(off.r)).toFixed(0)} µs of CPU over all processes ` +
          `(PostgreSQL ${(on.r.postgresCpuUsPerJob - off.r.postgresCpuUsPerJob).toFixed(0)} µs); ` +
          `completed jobs/s on/off ${(rate(on.r) / rate(off.r)).toFixed(2)}`,
      );
    }
    console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await bouncer?.stop();
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
