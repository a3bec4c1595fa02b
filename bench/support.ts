import { ChildProcess, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface Stats {
  median: number;
  p95: number;
  mean: number;
  n: number;
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
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU the serving process spent per request, in µs (user, system): what ratios cannot show on a shared machine. */
  cpuPerRequestUs: { user: number; system: number } | null;
}

/** POSTs `body` to `url` for LOAD.durationS at LOAD.connections after a 2 s warm-up, reading `pid`'s CPU around it. */
export async function loadRun(
  url: string,
  headers: Record<string, string>,
  pid: number | undefined,
  body = TWO_CARD_BODY,
): Promise<LoadResult> {
  const options = {
    url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections: LOAD.connections,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: pools, JIT, caches (the data-key cache when there is one)
  const before = cpuMs(pid);
  const result = await autocannon({ ...options, duration: LOAD.durationS });
  const after = cpuMs(pid);
  const perRequest = (a: number, b: number) => ((a - b) * 1000) / result.requests.total;
  return {
    rps: result.requests.average,
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
