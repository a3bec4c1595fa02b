import { performance } from 'node:perf_hooks';

export interface Stats {
  median: number;
  p95: number;
  mean: number;
  n: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), mean: samples.reduce((a, b) => a + b, 0) / samples.length, n: samples.length };
}

/**
 * Runs the cases round-robin (a, b, c, a, b, c, …) so that they share the machine's state —
 * caches, CPU frequency, background load — and their ratios are fair.
 */
export async function interleaved(cases: Record<string, () => Promise<unknown>>, rounds: number, warmup = 10): Promise<Record<string, Stats>> {
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
