import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection. Timings start from one: otherwise a major GC that falls inside the larger
 * of two runs (its allocations cross a threshold the smaller's do not) marks the whole Jest heap and
 * bills it to the code under test — 128 ms against a quarter's 6.5 ms in one loaded CI run.
 */
const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/**
 * Milliseconds of CPU this process spent on `run`, the best of `runs`. CPU time, not wall time: on a
 * machine busy with other work the wall clock also counts the time this process waited for a core.
 * Even CPU time swells under load (GC threads, shared caches), hence the best of several.
 */
export function bestCpuMs(run: () => unknown, runs = 7): number {
  let best = Infinity;
  collectGarbage();
  for (let i = 0; i < runs; i++) {
    const started = process.cpuUsage();
    run();
    const spent = process.cpuUsage(started);
    best = Math.min(best, (spent.user + spent.system) / 1000);
  }
  return best;
}

/**
 * That `large` (`factor` times the input of `small`) costs at most `maxRatio` times as much CPU: linear
 * work costs `factor` times as much, quadratic `factor²`. The pair is measured side by side up to four
 * times and the lowest ratio counts: noise inflates one side of a round, a quadratic cost every round.
 */
export function expectLinearCost(small: () => unknown, large: () => unknown, maxRatio: number, runs = 7): void {
  const rounds: Array<{ smallMs: number; largeMs: number }> = [];
  for (let round = 0; round < 4; round++) {
    const measured = { largeMs: bestCpuMs(large, runs), smallMs: bestCpuMs(small, runs) };
    rounds.push(measured);
    if (measured.largeMs <= maxRatio * Math.max(measured.smallMs, 1)) return;
  }
  expect({ rounds, linear: false }).toEqual({ rounds, linear: true });
}
