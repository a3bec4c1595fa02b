/**
 * node dist-bench/bench/profile-self.js LABEL=FILE@START-END/REQUESTS ... — self time by function in V8 CPU
 * profiles (`BENCH_API_PROFILE`), cut to a load's window on the monotonic clock and divided by its requests
 * (`BENCH_FORWARD_ROWS=hmac` prints the `@START-END/REQUESTS` of its measured load). Runs of one label are
 * averaged; with two labels (two builds) the functions are sorted by the first's minus the second's time.
 * A function is its name and file name (with its package's) without folder or line, so a build whose files
 * moved still matches.
 * The samples' durations are wall time while the thread was busy: on a loaded machine they hold the time it
 * waited for a core, so the shares say more than the sums.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const TOP = Number(process.env.PROFILE_TOP ?? 25);

function functionName(node: ProfileNode): string {
  const { functionName: name, url } = node.callFrame;
  const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  const file = url.startsWith('node:') ? url : `${inPackage ? `${inPackage}:` : ''}${basename(url)}`;
  return `${name || '(anonymous)'}${url ? ` ${file}` : ''}`;
}

/** µs per request by function, and in all, for the samples inside [start, end]; idle samples left out. */
function selfTimes(spec: string): { total: number; byFunction: Map<string, number> } {
  const match = /^(.+)@(\d+)-(\d+)\/(\d+)$/.exec(spec);
  if (!match) throw new Error(`expected FILE@START-END/REQUESTS, got ${spec}`);
  const [, file, start, end, requests] = match;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < Number(start) || at > Number(end)) continue;
    const node = nodes.get(profile.samples[i])!;
    if (node.callFrame.functionName === '(idle)') continue;
    const us = (profile.timeDeltas[i + 1] ?? 0) / Number(requests);
    const name = functionName(node);
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    total += us;
  }
  return { total, byFunction };
}

function main(): void {
  const runs = new Map<string, Array<ReturnType<typeof selfTimes>>>();
  for (const argument of process.argv.slice(2)) {
    const [label, spec] = argument.split(/=(.*)/s);
    runs.set(label, [...(runs.get(label) ?? []), selfTimes(spec)]);
  }
  const labels = [...runs.keys()];
  if (labels.length < 1 || labels.length > 2) throw new Error('one or two labels: LABEL=FILE@START-END/REQUESTS ...');
  const means = labels.map((label) => {
    const group = runs.get(label)!;
    const mean = new Map<string, number>();
    for (const run of group)
      for (const [name, us] of run.byFunction) mean.set(name, (mean.get(name) ?? 0) + us / group.length);
    console.log(`${label}: busy µs per request ${group.map((r) => r.total.toFixed(0)).join(', ')}`);
    return mean;
  });
  const names = new Set(means.flatMap((m) => [...m.keys()]));
  const rows = [...names].map((name) => ({ name, us: means.map((m) => m.get(name) ?? 0) }));
  const key = (r: { us: number[] }) => (r.us.length === 2 ? r.us[0] - r.us[1] : r.us[0]);
  rows.sort((a, b) => key(b) - key(a));
  const line = (r: { name: string; us: number[] }) =>
    `${r.us.length === 2 ? `${key(r) >= 0 ? '+' : ''}${key(r).toFixed(1)}  ` : ''}${r.us.map((u) => u.toFixed(1)).join(' / ')}  ${r.name}`;
  console.log(`\n${labels.join(' / ')} µs per request${labels.length === 2 ? ', the most grown first' : ''}:`);
  for (const row of rows.slice(0, TOP)) console.log(line(row));
  if (labels.length === 2) {
    console.log('\nthe most shrunk:');
    for (const row of rows.slice(-TOP).reverse()) console.log(line(row));
  }
}

main();
