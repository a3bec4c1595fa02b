import { ChildProcess, fork } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import Redis from 'ioredis';
import type { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../src/platform/config/config';
import { Sql } from '../src/platform/database/sql';

export interface Stats {
  median: number;
  p95: number;
  mean: number;
  n: number;
}

/** The service's `Sql` on a bench's own data source: named statements, as the API runs them on a plain PostgreSQL. */
export function benchSql(dataSource: DataSource, databaseUrl: string): Sql {
  return new Sql(dataSource, { databaseUrl, database: { transactionPooling: false } } as unknown as AppConfig);
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    median: at(0.5),
    p95: at(0.95),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    n: samples.length,
  };
}

/**
 * Runs the cases round-robin (a, b, c, a, b, c, …) so that they share the machine's state —
 * caches, CPU frequency, background load — and their ratios are fair.
 */
export async function interleaved(
  cases: Record<string, () => Promise<unknown>>,
  rounds: number,
  warmup = 10,
): Promise<Record<string, Stats>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [name, run] of Object.entries(cases)) {
      const start = performance.now();
      await run();
      const elapsed = performance.now() - start;
      if (round >= warmup) samples[name].push(elapsed);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
}

export function table(rows: Record<string, Stats>): string {
  const lines = ['| case | median ms | p95 ms | mean ms | n |', '|---|---:|---:|---:|---:|'];
  for (const [name, s] of Object.entries(rows)) {
    lines.push(`| ${name} | ${s.median.toFixed(3)} | ${s.p95.toFixed(3)} | ${s.mean.toFixed(3)} | ${s.n} |`);
  }
  return lines.join('\n');
}

/** Child processes a bench started, to stop them at its end. */
export const children: ChildProcess[] = [];

/** SIGTERM, then the child's exit (at once if it has already exited). */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

/** Forks a helper server script of this folder; resolves with the port it reports once listening. */
export function forkServer(
  script: string,
  env?: Record<string, string>,
): Promise<{ port: number; process: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, script), {
      stdio: 'inherit',
      ...(env ? { env: { ...process.env, ...env } } : {}),
    });
    children.push(child);
    child.once('message', (message: { port: number }) => resolve({ port: message.port, process: child }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** User and system CPU time of a process in ms, from /proc (Linux); null elsewhere. */
export function cpuMs(pid: number | undefined): { user: number; system: number } | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }; // clock ticks, USER_HZ = 100
  } catch {
    return null;
  }
}

/**
 * CPU of a process and its children (a supervisor and the processes of its group, WEB_CONCURRENCY /
 * WORKER_PROCESSES, or a proxy under node:cluster), user and system summed each, in ms; null if it is gone.
 * A child that exited in between takes its time with it.
 */
export function treeCpuMs(pid: number | undefined): { user: number; system: number } | null {
  const byPid = treeCpuByPid(pid);
  if (byPid.size === 0) return null;
  const sum = { user: 0, system: 0 };
  for (const cpu of byPid.values()) {
    sum.user += cpu.user;
    sum.system += cpu.system;
  }
  return sum;
}

/** The same, by process: the supervisor (or lone process) and each of its children. */
export function treeCpuByPid(pid: number | undefined): Map<number, { user: number; system: number }> {
  const byPid = new Map<number, { user: number; system: number }>();
  const own = cpuMs(pid);
  if (!own || pid === undefined) return byPid;
  byPid.set(pid, own);
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) !== pid) continue;
      byPid.set(Number(entry), { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 });
    } catch {
      // gone in between
    }
  }
  return byPid;
}

/**
 * How many of `pid`'s children hold the socket listening on `port` (/proc/net/tcp, then each child's fds):
 * the processes of a group (WEB_CONCURRENCY) that have started listening on the socket they share.
 */
export function listeningChildren(pid: number, port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set(
    readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(hex) && fields[3] === '0A')
      .map((fields) => `socket:[${fields[9]}]`),
  );
  let count = 0;
  for (const child of treeCpuByPid(pid).keys()) {
    if (child === pid) continue;
    try {
      if (readdirSync(`/proc/${child}/fd`).some((fd) => inodes.has(readlinkSafe(`/proc/${child}/fd/${fd}`)))) count++;
    } catch {
      // gone in between
    }
  }
  return count;
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

/** Commands a Redis has run since its start (INFO commandstats, summed): what a run cost it, as a difference. */
export async function redisCommands(url: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  } finally {
    redis.disconnect();
  }
}

/**
 * Transactions committed in one database (pg_stat_database), read after a pause: backends report their
 * counts at most once a second. `admin` is a connection to any database of the server.
 */
export async function databaseCommits(admin: Client, databaseUrl: string): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const name = new URL(databaseUrl).pathname.slice(1);
  const { rows } = await admin.query<{ n: string }>(
    `SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1`,
    [name],
  );
  return Number(rows[0]?.n ?? NaN);
}

/**
 * CPU time (user + system, ms) of every running process with this command name (`postgres`,
 * `redis-server`), so a run can say what the servers it shares the machine with spent. A process
 * that exits in between takes its time with it: the servers' connections here outlive a run.
 */
export function commandCpuMs(command: string): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      if (stat.slice(open + 1, close) !== command) continue;
      const fields = stat.slice(close + 2).split(' ');
      byPid.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // gone in between
    }
  }
  return byPid;
}

/**
 * CPU time (user + system, ms) of the PostgreSQL backends serving one database, by pid: a backend's process
 * title names its database, so other users of a shared server are left out (and so are the server's own
 * background processes, the WAL writer among them, which a commit also costs).
 */
export function databaseBackendsCpuMs(databaseUrl: string): Map<number, number> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const byPid = new Map<number, number>();
  for (const [pid, ms] of commandCpuMs('postgres')) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${name} `)) byPid.set(pid, ms);
    } catch {
      // gone in between
    }
  }
  return byPid;
}

/** What those processes spent between two readings; a process started in between counts whole. */
export function cpuSpentMs(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}

/** The machine's busy and total time (all CPUs, ms) from /proc/stat, for a busy share over an interval. */
export function machineCpuMs(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/ +/);
  const ticks = values.map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + ticks[4]; // idle + iowait
  return { busy: (total - idle) * 10, total: total * 10 };
}

/** POST a JSON body with a bearer token; the parsed answer, or an error naming the status. */
export async function postJson(url: string, token: string, body: unknown): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Load settings of the autocannon benches (issue 24 states its throughput targets at 32 connections). */
export const LOAD = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  durationS: Number(process.env.BENCH_DURATION ?? 10),
};

/** The card forward the benches send: two cards, each a number, an expiry and a literal code. */
export const TWO_CARD_BODY = JSON.stringify({
  cards: [
    { number: '{{ CARD_NUMBER_1 }}', expiry: '{{ CARD_EXPIRATION_DATE_1 }}', cvv: '123' },
    { number: '{{ CARD_NUMBER_2 }}', expiry: '{{ CARD_EXPIRATION_DATE_2 }}', cvv: '456' },
  ],
});

/** What one loaded run measured; the CPU is the serving process's, per request, when it could be read. */
export interface LoadResult {
  rps: number;
  /** Requests sent, the warm-up's included (what a server-side counter read around the run saw). */
  sent: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** The same CPU by process (the serving one first, then its children), user + system, µs per request. */
  byProcess: Array<{ pid: number; us: number }>;
  /**
   * CPU the serving process (with its group's processes, if it supervises one) spent per request, in µs (user,
   * system): what ratios cannot show on a shared machine.
   */
  cpuPerRequestUs: { user: number; system: number } | null;
}

/**
 * POSTs `body` to `url` for `durationS` (LOAD.durationS by default) at LOAD.connections after a 2 s warm-up,
 * reading the CPU of `pid` and its children around it. A function as `body` makes each request's body.
 */
export async function loadRun(
  url: string,
  headers: Record<string, string>,
  pid: number | undefined,
  body: string | (() => string) = TWO_CARD_BODY,
  durationS = LOAD.durationS,
): Promise<LoadResult> {
  const options = {
    url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    ...(typeof body === 'string'
      ? { body }
      : { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: body() }) }] }),
    connections: LOAD.connections,
  };
  const warmup = await autocannon({ ...options, duration: 2 }); // warm-up: pools, JIT, caches (the data-key cache)
  const beforeByPid = treeCpuByPid(pid);
  const before = treeCpuMs(pid);
  const result = await autocannon({ ...options, duration: durationS });
  const after = treeCpuMs(pid);
  const afterByPid = treeCpuByPid(pid);
  const perRequest = (a: number, b: number) => ((a - b) * 1000) / result.requests.total;
  const byProcess = [...afterByPid].map(([p, cpu]) => {
    const was = beforeByPid.get(p) ?? { user: 0, system: 0 };
    return { pid: p, us: perRequest(cpu.user + cpu.system, was.user + was.system) };
  });
  return {
    byProcess,
    rps: result.requests.average,
    sent: warmup.requests.total + result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    cpuPerRequestUs:
      before && after
        ? { user: perRequest(after.user, before.user), system: perRequest(after.system, before.system) }
        : null,
  };
}

/** A result's CPU per request, user and system together (NaN when it could not be read). */
export function cpuPerRequest(r: LoadResult): number {
  return r.cpuPerRequestUs ? r.cpuPerRequestUs.user + r.cpuPerRequestUs.system : NaN;
}
